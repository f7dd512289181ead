package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// grantProject is a project (with .git) whose extension "docs" has the
// given fs grants and whose pi.toml also sets a command_prefix.
func grantProject(t *testing.T, grants ...string) (e env, file string) {
	t.Helper()
	e = newEnv(t)
	real, err := filepath.EvalSymlinks(e.proj)
	if err != nil {
		t.Fatal(err)
	}
	e.proj = real
	if err := os.Mkdir(filepath.Join(e.proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(grants))
	for i, g := range grants {
		quoted[i] = tomlString(g)
	}
	file = writeFile(t, filepath.Join(e.proj, "pi.toml"), "[tools.bash]\ncommand_prefix = \"echo hi\"\n"+
		"[[extensions]]\nname = \"docs\"\npath = \"docs.wasm\"\nsha256 = \""+shaA+"\"\n"+
		"[extensions.grants]\nfs = ["+strings.Join(quoted, ", ")+"]\n")
	return e, file
}

func mkdirs(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// swap replaces the folder at dir with a symlink to target.
func swap(t *testing.T, dir, target string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	symlink(t, target, dir)
}

// TestTrustedGrantMovedUntrusts trusts a project, then moves where one of
// its fs grants points in every way a later pull or a local change can
// (the pi.toml bytes stay the same), and checks that the project counts as
// untrusted with a warning naming the grant, the old and the new target;
// that IsTrusted agrees; and that `pi trust` (Trust) trusts it again.
func TestTrustedGrantMovedUntrusts(t *testing.T) {
	var absDir string // per subtest: a folder outside the project, for "ro:ABS"
	tests := []struct {
		name   string
		grants []string
		before func(t *testing.T, proj string) // before Trust
		after  func(t *testing.T, proj string) // the move, after Trust
		// newSays is in the warning: where the grant goes now.
		newSays func(proj string) string
		// oldIs is where the grant pointed when trusted ("" = nowhere).
		oldIs func(proj string) string
	}{
		{
			name: "folder replaced by a link to /", grants: []string{"ro:docs"},
			before:  func(t *testing.T, p string) { mkdirs(t, filepath.Join(p, "docs")) },
			after:   func(t *testing.T, p string) { swap(t, filepath.Join(p, "docs"), "/") },
			newSays: func(p string) string { return "resolves to /, outside the project root" },
			oldIs:   func(p string) string { return filepath.Join(p, "docs") },
		},
		{
			name: "folder replaced by a link to a sibling of the project", grants: []string{"rw:docs"},
			before: func(t *testing.T, p string) {
				mkdirs(t, filepath.Join(p, "docs"), filepath.Join(filepath.Dir(p), "secrets"))
			},
			after: func(t *testing.T, p string) { swap(t, filepath.Join(p, "docs"), "../secrets") },
			newSays: func(p string) string {
				return "resolves to " + filepath.Join(filepath.Dir(p), "secrets") + ", outside the project root"
			},
			oldIs: func(p string) string { return filepath.Join(p, "docs") },
		},
		{
			name: "folder replaced by a chain of links ending at /", grants: []string{"ro:docs"},
			before: func(t *testing.T, p string) { mkdirs(t, filepath.Join(p, "docs")) },
			after: func(t *testing.T, p string) {
				symlink(t, "/", filepath.Join(p, "build", "hop2"))
				symlink(t, "build/hop2", filepath.Join(p, "hop1"))
				swap(t, filepath.Join(p, "docs"), "hop1")
			},
			newSays: func(p string) string { return "resolves to /, outside the project root" },
			oldIs:   func(p string) string { return filepath.Join(p, "docs") },
		},
		{
			name: "folder replaced by a link to another folder of the project", grants: []string{"ro:docs"},
			before:  func(t *testing.T, p string) { mkdirs(t, filepath.Join(p, "docs"), filepath.Join(p, "private")) },
			after:   func(t *testing.T, p string) { swap(t, filepath.Join(p, "docs"), "private") },
			newSays: func(p string) string { return "now points to " + filepath.Join(p, "private") },
			oldIs:   func(p string) string { return filepath.Join(p, "docs") },
		},
		{
			name: "a parent folder of the grant replaced by a link", grants: []string{"ro:docs/api"},
			before: func(t *testing.T, p string) {
				mkdirs(t, filepath.Join(p, "docs", "api"), filepath.Join(filepath.Dir(p), "other", "api"))
			},
			after: func(t *testing.T, p string) {
				swap(t, filepath.Join(p, "docs"), filepath.Join(filepath.Dir(p), "other"))
			},
			newSays: func(p string) string {
				return "resolves to " + filepath.Join(filepath.Dir(p), "other", "api") + ", outside the project root"
			},
			oldIs: func(p string) string { return filepath.Join(p, "docs", "api") },
		},
		{
			name: "folder removed", grants: []string{"ro:docs"},
			before:  func(t *testing.T, p string) { mkdirs(t, filepath.Join(p, "docs")) },
			after:   func(t *testing.T, p string) { os.RemoveAll(filepath.Join(p, "docs")) },
			newSays: func(p string) string { return "now does not resolve" },
			oldIs:   func(p string) string { return filepath.Join(p, "docs") },
		},
		{
			name: "a grant that did not resolve when trusted now does, through a link", grants: []string{"ro:later"},
			after:   func(t *testing.T, p string) { symlink(t, "/etc", filepath.Join(p, "later")) },
			newSays: func(p string) string { return "resolves to /etc, outside the project root" },
			oldIs:   func(p string) string { return "" },
		},
		{
			name: "an absolute grant's folder replaced by a link", grants: []string{"ro:ABS"},
			before:  func(t *testing.T, p string) { mkdirs(t, absDir) },
			after:   func(t *testing.T, p string) { swap(t, absDir, "/etc") },
			newSays: func(p string) string { return "now points to /etc" },
			oldIs:   func(p string) string { return absDir },
		},
		{
			name: "the second grant moves, the first stays", grants: []string{"ro:src", "ro:docs"},
			before:  func(t *testing.T, p string) { mkdirs(t, filepath.Join(p, "src"), filepath.Join(p, "docs")) },
			after:   func(t *testing.T, p string) { swap(t, filepath.Join(p, "docs"), "/") },
			newSays: func(p string) string { return "resolves to /, outside the project root" },
			oldIs:   func(p string) string { return filepath.Join(p, "docs") },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			absDir = filepath.Join(base, "data")
			grants := make([]string, len(tt.grants))
			for i, g := range tt.grants {
				grants[i] = strings.ReplaceAll(g, "ABS", absDir)
			}
			e, file := grantProject(t, grants...)
			if tt.before != nil {
				tt.before(t, e.proj)
			}
			mustTrust(t, e.home, file)
			assertTrusted(t, e, file, true, "")

			tt.after(t, e.proj)
			c := assertTrusted(t, e, file, false, "")
			// The whole project is untrusted: the command_prefix too.
			if c.Tools.Bash.CommandPrefix != "" {
				t.Errorf("command_prefix applied: %q", c.Tools.Bash.CommandPrefix)
			}
			w := c.Warnings[0]
			moved := grants[len(grants)-1]
			for _, want := range []string{file, "is no longer trusted because the fs grant " + `"` + moved + `"` + ` of extension "docs"`, tt.newSays(e.proj), "pi trust"} {
				if !strings.Contains(w, want) {
					t.Errorf("warning %q\ndoes not say %q", w, want)
				}
			}
			if old := tt.oldIs(e.proj); old != "" && !strings.Contains(w, "pointed to "+old+" when it was trusted") {
				t.Errorf("warning %q\ndoes not name the old target %s", w, old)
			} else if old == "" && !strings.Contains(w, "pointed to nothing") {
				t.Errorf("warning %q\ndoes not say it pointed nowhere", w)
			}

			// `pi trust` again: trusted, and the new target is recorded.
			mustTrust(t, e.home, file)
			assertTrusted(t, e, file, true, "")
			recorded, err := TrustGrants(e.home, file)
			if err != nil {
				t.Fatal(err)
			}
			if len(recorded) != len(grants) || recorded[len(recorded)-1].Grant != moved {
				t.Errorf("recorded %+v", recorded)
			}
		})
	}
}

// assertTrusted loads the project and checks whether its settings applied
// (and IsTrusted agrees); it returns the Config.
func assertTrusted(t *testing.T, e env, file string, want bool, _ string) *Config {
	t.Helper()
	c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Home: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	got := len(c.Extensions) == 1
	if got != want {
		t.Fatalf("extensions loaded = %v, want %v (warnings %q)", got, want, c.Warnings)
	}
	if want && len(c.Warnings) > 0 {
		t.Errorf("warnings %q", c.Warnings)
	}
	if !want && len(c.Warnings) != 1 {
		t.Fatalf("warnings %q, want one", c.Warnings)
	}
	ok, err := IsTrusted(e.home, file)
	if err != nil {
		t.Fatal(err)
	}
	if ok != want {
		t.Errorf("IsTrusted = %v, want %v", ok, want)
	}
	return c
}

// TestTrustedGrantUnchanged: what does not move a grant does not untrust:
// new files in the folder, the folder reached through the same link, a
// grant that did not resolve and still does not.
func TestTrustedGrantUnchanged(t *testing.T) {
	t.Run("new files in the granted folder", func(t *testing.T) {
		e, file := grantProject(t, "ro:docs")
		mkdirs(t, filepath.Join(e.proj, "docs"))
		mustTrust(t, e.home, file)
		writeFile(t, filepath.Join(e.proj, "docs", "new.md"), "x")
		mkdirs(t, filepath.Join(e.proj, "docs", "sub"))
		assertTrusted(t, e, file, true, "")
	})
	t.Run("a link inside the project that was there when trusted", func(t *testing.T) {
		e, file := grantProject(t, "ro:docs")
		mkdirs(t, filepath.Join(e.proj, "real-docs"))
		symlink(t, "real-docs", filepath.Join(e.proj, "docs"))
		mustTrust(t, e.home, file)
		assertTrusted(t, e, file, true, "")
	})
	t.Run("a grant that did not resolve and still does not", func(t *testing.T) {
		e, file := grantProject(t, "rw:out")
		mustTrust(t, e.home, file)
		recorded, err := TrustGrants(e.home, file)
		if err != nil {
			t.Fatal(err)
		}
		if len(recorded) != 1 || recorded[0].Real != "" || !strings.Contains(recorded[0].Problem, "no such file") {
			t.Errorf("recorded %+v", recorded)
		}
		assertTrusted(t, e, file, true, "")
	})
}

// TestTrustGrantsRecorded: trust.json holds each grant's real path, once per
// (extension, grant), and an entry for a file without fs grants records an
// empty list (not null, which marks entries from before grants).
func TestTrustGrantsRecorded(t *testing.T) {
	e, file := grantProject(t, "ro:docs", "rw:.", "ro:docs")
	mkdirs(t, filepath.Join(e.proj, "docs"))
	mustTrust(t, e.home, file)
	got, err := TrustGrants(e.home, file)
	if err != nil {
		t.Fatal(err)
	}
	want := []TrustedGrant{
		{Extension: "docs", Grant: "ro:docs", Real: filepath.Join(e.proj, "docs")},
		{Extension: "docs", Grant: "rw:.", Real: e.proj},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("recorded\n %+v\nwant\n %+v", got, want)
	}

	plain := writeFile(t, filepath.Join(t.TempDir(), "pi.toml"), "[tools.bash]\nshell = \"/bin/sh\"\n")
	mustTrust(t, e.home, plain)
	data, err := os.ReadFile(filepath.Join(e.home, TrustFileName))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Projects map[string]map[string]json.RawMessage `json:"projects"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.EvalSymlinks(filepath.Dir(plain))
	if g := string(raw.Projects[dir]["grants"]); g != "[]" {
		t.Errorf("grants of a file without fs grants = %s, want []", g)
	}
}

// TestTrustEntryFromBeforeGrants: trust.json written by an older pi (no
// "grants" in its entries) still loads; its entries keep trusting files
// without fs grants, and no longer trust a file with fs grants, with a
// warning that says to run `pi trust` again, after which it holds.
func TestTrustEntryFromBeforeGrants(t *testing.T) {
	oldStore := func(t *testing.T, home, file string) {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		dir, _ := filepath.EvalSymlinks(filepath.Dir(file))
		store := map[string]any{"version": 1, "projects": map[string]any{
			dir: map[string]any{"file": file, "sha256": sha256Of(t, string(data)), "trustedAt": time.Now().UTC().Format(time.RFC3339)},
		}}
		out, _ := json.MarshalIndent(store, "", "  ")
		writeFile(t, filepath.Join(home, TrustFileName), string(out))
		if err := os.Chmod(filepath.Join(home, TrustFileName), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("file without fs grants stays trusted", func(t *testing.T) {
		e := newEnv(t)
		file := writeFile(t, filepath.Join(e.proj, "pi.toml"), "[tools.bash]\ncommand_prefix = \"echo old\"\n[[extensions]]\nname = \"x\"\npath = \"x.wasm\"\nsha256 = \""+shaA+"\"\n")
		oldStore(t, e.home, file)
		c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home})
		if err != nil {
			t.Fatal(err)
		}
		if c.Tools.Bash.CommandPrefix != "echo old" || len(c.Extensions) != 1 || len(c.Warnings) != 0 {
			t.Errorf("prefix %q extensions %d warnings %q", c.Tools.Bash.CommandPrefix, len(c.Extensions), c.Warnings)
		}
	})
	t.Run("file with fs grants needs pi trust again", func(t *testing.T) {
		e, file := grantProject(t, "ro:docs")
		mkdirs(t, filepath.Join(e.proj, "docs"))
		oldStore(t, e.home, file)
		c := assertTrusted(t, e, file, false, "")
		if w := c.Warnings[0]; !strings.Contains(w, "was trusted by an older pi that did not record where its extensions' fs grants point") || !strings.Contains(w, "run `pi trust` in "+e.proj) {
			t.Errorf("warning %q", w)
		}
		mustTrust(t, e.home, file)
		assertTrusted(t, e, file, true, "")
	})
}

// TestTrustGrantsAgainstTheLoadRoot: a --config file is loaded with the
// working directory as its project root; a grant recorded against the
// file's own folder resolves elsewhere there, so it does not count.
func TestTrustGrantsAgainstTheLoadRoot(t *testing.T) {
	e, file := grantProject(t, "ro:docs")
	mkdirs(t, filepath.Join(e.proj, "docs"))
	mustTrust(t, e.home, file)
	other := t.TempDir()
	mkdirs(t, filepath.Join(other, "docs"))
	c, err := Load(LoadOptions{Cwd: other, PIHome: e.home, ConfigFile: file})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Extensions) != 0 || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `fs grant "ro:docs"`) {
		t.Errorf("extensions %d warnings %q", len(c.Extensions), c.Warnings)
	}
}
