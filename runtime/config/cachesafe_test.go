//go:build unix

package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCacheOthersCanChangeIsRefused spoils the cache folder (the
// compilation cache wazero loads native code from) in each way that lets
// another user write what pi loads: the folder, a parent, wazero's version
// folder or an entry in it, a planted link; TrustedCacheDir must refuse it
// with a message naming the path and the command that fixes it, and give ""
// (run without the cache). The harmless variants are accepted.
func TestCacheOthersCanChangeIsRefused(t *testing.T) {
	root := os.Geteuid() == 0
	const wz = "wazero-v1.12.0-amd64-linux"
	// fresh makes PI_CACHE_DIR=TMP/shared/cache with a wazero folder and
	// one compiled entry, all the owner's and private.
	fresh := func(t *testing.T) (cache, entry string) {
		base := filepath.Join(t.TempDir(), "shared")
		cache = filepath.Join(base, "cache")
		entry = filepath.Join(cache, wz, strings.Repeat("ab", 32))
		writeFile(t, entry, "\x7fELF native code")
		for _, d := range []string{base, cache, filepath.Dir(entry)} {
			mustChmod(t, d, 0o700)
		}
		mustChmod(t, entry, 0o600)
		t.Setenv("PI_CACHE_DIR", cache)
		return cache, entry
	}
	for _, tc := range []struct {
		name     string
		needRoot bool
		spoil    func(t *testing.T, cache, entry string) string // the path named
		want     []string                                       // FILE is that path
	}{
		{name: "the folder is mode 0777", spoil: func(t *testing.T, c, e string) string { mustChmod(t, c, 0o777); return c },
			want: []string{"refuse cache folder", "FILE", "writable by every user", "chmod go-w FILE"}},
		{name: "the folder is 1777 (sticky does not excuse it)", spoil: func(t *testing.T, c, e string) string { mustChmod(t, c, os.ModeSticky|0o777); return c },
			want: []string{"FILE", "writable by every user"}},
		{name: "a parent is world-writable", spoil: func(t *testing.T, c, e string) string { mustChmod(t, filepath.Dir(c), 0o777); return filepath.Dir(c) },
			want: []string{"its parent folder FILE", "writable by every user", "chmod go-w FILE"}},
		{name: "wazero's folder is world-writable", spoil: func(t *testing.T, c, e string) string { mustChmod(t, filepath.Dir(e), 0o757); return filepath.Dir(e) },
			want: []string{"FILE", "writable by every user", "chmod go-w FILE"}},
		{name: "a planted world-writable entry", spoil: func(t *testing.T, c, e string) string { mustChmod(t, e, 0o666); return e },
			want: []string{"FILE", "writable by every user", "chmod go-w FILE"}},
		{name: "a world-writable record of which entry holds a module's code", spoil: func(t *testing.T, c, e string) string {
			rec := filepath.Join(c, "pi-compiled", "v1.12.0-amd64-linux", strings.Repeat("cd", 32))
			writeFile(t, rec, "shell2 "+wz+"/"+strings.Repeat("ab", 32)+" 16 0\n")
			for _, d := range []string{filepath.Dir(filepath.Dir(rec)), filepath.Dir(rec)} {
				mustChmod(t, d, 0o700)
			}
			mustChmod(t, rec, 0o666)
			return rec
		}, want: []string{"FILE", "writable by every user", "chmod go-w FILE"}},
		{name: "a planted link", spoil: func(t *testing.T, c, e string) string {
			os.Remove(e)
			if err := os.Symlink("/bin/sh", e); err != nil {
				t.Fatal(err)
			}
			return e
		}, want: []string{"FILE is a symbolic link", "rm FILE"}},
		{name: "the folder is owned by another user", needRoot: true, spoil: func(t *testing.T, c, e string) string { mustChown(t, c, 65534, 65534); return c },
			want: []string{"FILE", "owned by nobody (uid 65534)", "chown"}},
		{name: "an entry is owned by another user", needRoot: true, spoil: func(t *testing.T, c, e string) string { mustChown(t, e, 65534, 65534); return e },
			want: []string{"FILE", "owned by nobody (uid 65534)", "chown"}},
		{name: "an entry writable by a shared group", needRoot: true, spoil: func(t *testing.T, c, e string) string {
			mustChown(t, e, -1, 65534)
			mustChmod(t, e, 0o660)
			return e
		}, want: []string{"FILE", "writable by group nogroup (gid 65534)", "chmod go-w FILE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needRoot && !root {
				t.Skip("needs root to give a file to another user (chown)")
			}
			cache, entry := fresh(t)
			named := tc.spoil(t, cache, entry)
			dir, err := TrustedCacheDir(t.TempDir())
			if dir != "" || !errors.Is(err, ErrUnsafeFile) {
				t.Fatalf("TrustedCacheDir = %q, %v; want it refused", dir, err)
			}
			for _, w := range tc.want {
				if w = strings.ReplaceAll(w, "FILE", named); !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), "pi runs without the cache") {
				t.Errorf("message %q does not say pi runs without the cache", err)
			}
		})
	}

	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, cache, entry string)
	}{
		{name: "private tree", setup: func(t *testing.T, c, e string) {}},
		{name: "0755 folders and 0644 entries", setup: func(t *testing.T, c, e string) {
			mustChmod(t, c, 0o755)
			mustChmod(t, filepath.Dir(e), 0o755)
			mustChmod(t, e, 0o644)
		}},
		{name: "a cache shared with another program, whose files pi never reads", setup: func(t *testing.T, c, e string) {
			other := writeFile(t, filepath.Join(c, "other-program", "x"), "")
			mustChmod(t, other, 0o666)
		}},
		{name: "not created yet, below a sticky /tmp-like folder", setup: func(t *testing.T, c, e string) {
			sticky := filepath.Join(t.TempDir(), "tmp")
			if err := os.Mkdir(sticky, 0o700); err != nil {
				t.Fatal(err)
			}
			mustChmod(t, sticky, os.ModeSticky|0o777)
			t.Setenv("PI_CACHE_DIR", filepath.Join(sticky, "mine", "cache"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache, entry := fresh(t)
			tc.setup(t, cache, entry)
			if dir, err := TrustedCacheDir(t.TempDir()); dir == "" || err != nil {
				t.Errorf("TrustedCacheDir = %q, %v; want it used", dir, err)
			}
		})
	}
}

// TestRecordsOthersCanChangeAreRefused: the lazy-load and declared records
// follow the same rule, on every file.
func TestRecordsOthersCanChangeAreRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lazy")
	rec := writeFile(t, filepath.Join(dir, "x.json"), "{}")
	if got, err := RecordsDir(dir, "lazy-load records"); got != dir || err != nil {
		t.Fatalf("own records: %q, %v", got, err)
	}
	mustChmod(t, rec, 0o646)
	got, err := RecordsDir(dir, "lazy-load records")
	if got != "" || !errors.Is(err, ErrUnsafeFile) || !strings.Contains(err.Error(), "chmod go-w "+rec) || !strings.Contains(err.Error(), "refuse lazy-load records") {
		t.Errorf("a planted record: %q, %v", got, err)
	}
}
