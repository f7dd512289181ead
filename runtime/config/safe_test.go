package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFilesOthersCanChangeAreRefused spoils each file pi reads its settings
// from (global pi.toml, project pi.toml, a --config file, trust.json) in
// each way that lets another user change it, and checks that Load refuses
// it with a message naming the file, the reason and the fix; then that the
// harmless variants (private group, root's file, your own 0644) load.
func TestFilesOthersCanChangeAreRefused(t *testing.T) {
	root := os.Geteuid() == 0
	type spoil struct {
		name     string
		needRoot bool
		apply    func(t *testing.T, file string) string // returns the path Load names
		want     []string                               // in the message; FILE = that path
	}
	spoils := []spoil{
		{name: "world-writable", apply: func(t *testing.T, f string) string { mustChmod(t, f, 0o646); return f },
			want: []string{"refuse", "FILE", "writable by every user", "chmod go-w FILE"}},
		{name: "world-writable 0666", apply: func(t *testing.T, f string) string { mustChmod(t, f, 0o666); return f },
			want: []string{"FILE", "writable by every user", "chmod go-w FILE"}},
		{name: "owned by another user", needRoot: true, apply: func(t *testing.T, f string) string { mustChown(t, f, 65534, -1); return f },
			want: []string{"refuse", "FILE", "owned by nobody (uid 65534)", "not by you", "chown"}},
		{name: "owned by another user, even read-only", needRoot: true, apply: func(t *testing.T, f string) string {
			mustChown(t, f, 65534, 65534)
			mustChmod(t, f, 0o444)
			return f
		}, want: []string{"FILE", "owned by nobody (uid 65534)"}},
		{name: "writable by a shared group", needRoot: true, apply: func(t *testing.T, f string) string {
			mustChown(t, f, -1, 65534)
			mustChmod(t, f, 0o664)
			return f
		}, want: []string{"FILE", "writable by group nogroup (gid 65534)", "chmod go-w FILE"}},
		{name: "a symlink to a world-writable file", apply: func(t *testing.T, f string) string {
			target := filepath.Join(t.TempDir(), "elsewhere.toml")
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, target, string(data))
			mustChmod(t, target, 0o666)
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, f); err != nil {
				t.Fatal(err)
			}
			return f
		}, want: []string{"FILE", "writable by every user"}},
	}
	harmless := []spoil{
		{name: "your own 0644", apply: func(t *testing.T, f string) string { return f }},
		{name: "your own 0600", apply: func(t *testing.T, f string) string { mustChmod(t, f, 0o600); return f }},
		{name: "group-writable, group is the owner's private group", needRoot: true, apply: func(t *testing.T, f string) string {
			mustChown(t, f, 0, 0) // root's primary group is root, with no other members
			mustChmod(t, f, 0o664)
			return f
		}},
	}

	type target struct {
		name string
		// file picks the spoiled file in a prepared env; load runs Load.
		file func(e env) string
		load func(e env) error
	}
	const code = "[tools.bash]\ncommand_prefix = \"echo hi\"\n"
	targets := []target{
		{name: "global pi.toml", file: func(e env) string { return filepath.Join(e.home, "pi.toml") },
			load: func(e env) error { _, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home}); return err }},
		{name: "project pi.toml", file: func(e env) string { return filepath.Join(e.proj, "pi.toml") },
			load: func(e env) error { _, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home}); return err }},
		{name: "project pi.toml with --trust", file: func(e env) string { return filepath.Join(e.proj, "pi.toml") },
			load: func(e env) error { _, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Trust: true}); return err }},
		{name: "--config file", file: func(e env) string { return filepath.Join(e.proj, "pi.toml") },
			load: func(e env) error {
				_, err := Load(LoadOptions{Cwd: t.TempDir(), PIHome: e.home, ConfigFile: filepath.Join(e.proj, "pi.toml")})
				return err
			}},
		{name: "trust.json", file: func(e env) string { return filepath.Join(e.home, TrustFileName) },
			load: func(e env) error { _, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home}); return err }},
		{name: "trust.json read by IsTrusted", file: func(e env) string { return filepath.Join(e.home, TrustFileName) },
			load: func(e env) error { _, err := IsTrusted(e.home, filepath.Join(e.proj, "pi.toml")); return err }},
		{name: "trust.json updated by Trust", file: func(e env) string { return filepath.Join(e.home, TrustFileName) },
			load: func(e env) error { return Trust(e.home, filepath.Join(e.proj, "pi.toml")) }},
		{name: "pi.toml trusted by Trust", file: func(e env) string { return filepath.Join(e.proj, "pi.toml") },
			load: func(e env) error { return Trust(e.home, filepath.Join(e.proj, "pi.toml")) }},
	}
	prepare := func(t *testing.T) env {
		e := newEnv(t)
		writeFile(t, filepath.Join(e.home, "pi.toml"), "[model]\nname = \"g\"\n")
		file := writeFile(t, filepath.Join(e.proj, "pi.toml"), code)
		mustTrust(t, e.home, file)
		return e
	}
	for _, tg := range targets {
		for _, sp := range spoils {
			t.Run(tg.name+"/"+sp.name, func(t *testing.T) {
				if sp.needRoot && !root {
					t.Skip("needs root to chown")
				}
				e := prepare(t)
				named := sp.apply(t, tg.file(e))
				err := tg.load(e)
				if !errors.Is(err, ErrUnsafeFile) {
					t.Fatalf("err = %v, want ErrUnsafeFile", err)
				}
				for _, w := range sp.want {
					if w = strings.ReplaceAll(w, "FILE", named); !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
			})
		}
		for _, sp := range harmless {
			t.Run(tg.name+"/accepts "+sp.name, func(t *testing.T) {
				if sp.needRoot && !root {
					t.Skip("needs root to chown")
				}
				e := prepare(t)
				sp.apply(t, tg.file(e))
				if err := tg.load(e); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestUnsafeProjectFileNotAppliedInParts: the refusal is the whole load, so
// nothing of a file others can change applies, not even the settings that
// need no trust.
func TestUnsafeProjectFileRefusesTheLoad(t *testing.T) {
	e := newEnv(t)
	file := writeFile(t, filepath.Join(e.proj, "pi.toml"), "[model]\nname = \"planted\"\n")
	mustChmod(t, file, 0o666)
	c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Trust: true})
	if err == nil {
		t.Fatalf("loaded: model %q", c.Model.Name)
	}
	if !errors.Is(err, ErrUnsafeFile) {
		t.Errorf("err = %v", err)
	}
}

func mustChmod(t *testing.T, file string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(file, mode); err != nil {
		t.Fatal(err)
	}
}

func mustChown(t *testing.T, file string, uid, gid int) {
	t.Helper()
	if err := os.Chown(file, uid, gid); err != nil {
		t.Fatal(err)
	}
}
