package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigWritesKeepSymlinks: a pi.toml or trust.json that is a symlink
// (into a dotfiles repository, through a chain of links, or dangling) stays
// a symlink through every write: AppendExtension, RemoveExtension, Trust
// and Untrust update the target.
func TestConfigWritesKeepSymlinks(t *testing.T) {
	type layout struct {
		name string
		// link makes link point (maybe through hops) at target and returns
		// the link's expected Readlink.
		link func(t *testing.T, base, link, target string) string
	}
	layouts := []layout{
		{name: "direct link", link: func(t *testing.T, base, link, target string) string {
			symlink(t, target, link)
			return target
		}},
		{name: "relative link", link: func(t *testing.T, base, link, target string) string {
			rel, err := filepath.Rel(filepath.Dir(link), target)
			if err != nil {
				t.Fatal(err)
			}
			symlink(t, rel, link)
			return rel
		}},
		{name: "chain of links", link: func(t *testing.T, base, link, target string) string {
			hop := filepath.Join(base, "hops", filepath.Base(link)+".hop")
			symlink(t, target, hop)
			symlink(t, hop, link)
			return hop
		}},
	}
	for _, ly := range layouts {
		t.Run(ly.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			home, proj := filepath.Join(base, "home"), filepath.Join(base, "proj")
			dot := filepath.Join(base, "dotfiles")
			mkdirs(t, home, proj)
			tomlTarget := writeFile(t, filepath.Join(dot, "proj.toml"), "# kept\n[tools.bash]\nshell = \"/bin/sh\"\n")
			trustTarget := filepath.Join(dot, "trust.json") // dangling until the first Trust
			tomlLink, trustLink := filepath.Join(proj, "pi.toml"), filepath.Join(home, TrustFileName)
			wantToml := ly.link(t, base, tomlLink, tomlTarget)
			wantTrust := ly.link(t, base, trustLink, trustTarget)
			check := func(step string) {
				t.Helper()
				for _, l := range [][2]string{{tomlLink, wantToml}, {trustLink, wantTrust}} {
					if got, err := os.Readlink(l[0]); err != nil || got != l[1] {
						t.Errorf("after %s: %s -> %q (%v), want a link to %s", step, l[0], got, err, l[1])
					}
				}
				assertNoTempFiles(t, base)
			}

			mustTrust(t, home, tomlLink)
			check("Trust")
			if data, err := os.ReadFile(trustTarget); err != nil || !strings.Contains(string(data), proj) {
				t.Errorf("trust.json target: %q %v", data, err)
			}
			if ok, err := IsTrusted(home, tomlLink); err != nil || !ok {
				t.Errorf("IsTrusted = %v, %v", ok, err)
			}
			if err := AppendExtension(tomlLink, Extension{Name: "loc", Path: filepath.Join(proj, ".pi", "extensions", "loc.wasm"), SHA256: shaA}); err != nil {
				t.Fatal(err)
			}
			check("AppendExtension")
			if data, _ := os.ReadFile(tomlTarget); !strings.HasPrefix(string(data), "# kept\n") || !strings.Contains(string(data), `name = "loc"`) {
				t.Errorf("pi.toml target:\n%s", data)
			}
			mustTrust(t, home, tomlLink)
			check("Trust again")
			if err := RemoveExtension(tomlLink, "loc"); err != nil {
				t.Fatal(err)
			}
			check("RemoveExtension")
			if data, _ := os.ReadFile(tomlTarget); strings.Contains(string(data), "loc") {
				t.Errorf("pi.toml target still names loc:\n%s", data)
			}
			if err := Untrust(home, proj); err != nil {
				t.Fatal(err)
			}
			check("Untrust")
			if data, _ := os.ReadFile(trustTarget); strings.Contains(string(data), proj) {
				t.Errorf("trust.json target still names the project:\n%s", data)
			}
		})
	}
}

// TestFailedConfigWriteLeavesOldFile: a pi.toml the writer refuses (no
// write permission bit, which holds for root too) is left as it was, with
// no temporary file beside it.
func TestFailedConfigWriteLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, filepath.Join(dir, "pi.toml"), "# old\n")
	if err := os.Chmod(file, 0o444); err != nil {
		t.Fatal(err)
	}
	err := AppendExtension(file, Extension{Name: "loc", Path: filepath.Join(dir, "loc.wasm"), SHA256: shaA})
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(file); string(data) != "# old\n" {
		t.Errorf("file now %q", data)
	}
	assertNoTempFiles(t, dir)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %v", entries)
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.Contains(fi.Name(), ".pi-tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}
