package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProjectSearchStopsAtProjectRoot plants pi.toml files in every place
// above the project a stranger or a stale checkout could put one, and checks
// which one (if any) applies and what the project root is.
func TestProjectSearchStopsAtProjectRoot(t *testing.T) {
	const toml = "[model]\nname = \"from-FILE\"\n"
	mkdir := func(t *testing.T, p string) {
		t.Helper()
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		// setup builds the tree under base and returns the cwd and the home
		// folder (relative to base; home "" = none).
		setup    func(t *testing.T, base string) (cwd, home string)
		wantFile string // relative to base; "" = no project file
		wantRoot string // relative to base: Config.ProjectRoot, the pi.toml's folder when there is one
	}{
		{
			name: "pi.toml in the cwd without any marker",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "p", "pi.toml"), toml)
				return "p", ""
			},
			wantFile: "p/pi.toml", wantRoot: "p",
		},
		{
			name: "pi.toml in a parent without .git is not applied",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "p", "pi.toml"), toml)
				mkdir(t, filepath.Join(base, "p", "sub"))
				return "p/sub", ""
			},
			wantRoot: "p/sub",
		},
		{
			name: "pi.toml at a .git root applies in its subfolders",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "p", "pi.toml"), toml)
				mkdir(t, filepath.Join(base, "p", ".git"))
				mkdir(t, filepath.Join(base, "p", "a", "b"))
				return "p/a/b", ""
			},
			wantFile: "p/pi.toml", wantRoot: "p",
		},
		{
			name: "a .git file (worktree, submodule) marks the root",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "p", "pi.toml"), toml)
				writeFile(t, filepath.Join(base, "p", ".git"), "gitdir: /elsewhere\n")
				mkdir(t, filepath.Join(base, "p", "a"))
				return "p/a", ""
			},
			wantFile: "p/pi.toml", wantRoot: "p",
		},
		{
			name: "a .pi folder marks the root",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "p", "pi.toml"), toml)
				mkdir(t, filepath.Join(base, "p", ".pi", "extensions"))
				mkdir(t, filepath.Join(base, "p", "a"))
				return "p/a", ""
			},
			wantFile: "p/pi.toml", wantRoot: "p",
		},
		{
			name: "a .pi file does not mark the root",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "p", "pi.toml"), toml)
				writeFile(t, filepath.Join(base, "p", ".pi"), "")
				mkdir(t, filepath.Join(base, "p", "a"))
				return "p/a", ""
			},
			wantRoot: "p/a",
		},
		{
			name: "the nearest pi.toml between cwd and the root wins",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "p", "pi.toml"), toml)
				writeFile(t, filepath.Join(base, "p", "a", "pi.toml"), toml)
				mkdir(t, filepath.Join(base, "p", ".git"))
				mkdir(t, filepath.Join(base, "p", "a", "b"))
				return "p/a/b", ""
			},
			wantFile: "p/a/pi.toml", wantRoot: "p/a", // grants are relative to the pi.toml's folder
		},
		{
			name: "pi.toml above the project root is not applied",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "pi.toml"), toml) // like /tmp/pi.toml
				mkdir(t, filepath.Join(base, "p", ".git"))
				mkdir(t, filepath.Join(base, "p", "sub"))
				return "p/sub", ""
			},
			wantRoot: "p",
		},
		{
			name: "an inner repository stops the search before the outer one's pi.toml",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "outer", "pi.toml"), toml)
				mkdir(t, filepath.Join(base, "outer", ".git"))
				mkdir(t, filepath.Join(base, "outer", "vendor", "inner", ".git"))
				mkdir(t, filepath.Join(base, "outer", "vendor", "inner", "src"))
				return "outer/vendor/inner/src", ""
			},
			wantRoot: "outer/vendor/inner",
		},
		{
			name: "pi.toml above $HOME is not applied, even with .git there",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "pi.toml"), toml) // like /home/pi.toml
				mkdir(t, filepath.Join(base, ".git"))
				mkdir(t, filepath.Join(base, "me", "work"))
				return "me/work", "me"
			},
			wantRoot: "me/work",
		},
		{
			name: "$HOME's own .pi (pi's global folder) marks nothing",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "me", "pi.toml"), toml)
				mkdir(t, filepath.Join(base, "me", ".pi", "agent"))
				mkdir(t, filepath.Join(base, "me", "work"))
				return "me/work", "me"
			},
			wantRoot: "me/work",
		},
		{
			name: "$HOME with .git (a dotfiles repository) is a project root",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "me", "pi.toml"), toml)
				mkdir(t, filepath.Join(base, "me", ".git"))
				mkdir(t, filepath.Join(base, "me", "notes"))
				return "me/notes", "me"
			},
			wantFile: "me/pi.toml", wantRoot: "me",
		},
		{
			name: "$HOME named through a symlink still stops the search",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "pi.toml"), toml)
				mkdir(t, filepath.Join(base, ".git"))
				mkdir(t, filepath.Join(base, "real-me", "work"))
				if err := os.Symlink("real-me", filepath.Join(base, "me-link")); err != nil {
					t.Fatal(err)
				}
				return "real-me/work", "me-link"
			},
			wantRoot: "real-me/work",
		},
		{
			name: "a cwd outside $HOME searches up to its root as usual",
			setup: func(t *testing.T, base string) (string, string) {
				writeFile(t, filepath.Join(base, "srv", "p", "pi.toml"), toml)
				mkdir(t, filepath.Join(base, "srv", "p", ".git"))
				mkdir(t, filepath.Join(base, "srv", "p", "x"))
				mkdir(t, filepath.Join(base, "me"))
				return "srv/p/x", "me"
			},
			wantFile: "srv/p/pi.toml", wantRoot: "srv/p",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			cwd, home := tt.setup(t, base)
			opts := LoadOptions{Cwd: filepath.Join(base, cwd), PIHome: filepath.Join(base, "pihome"), Trust: true}
			if home != "" {
				opts.Home = filepath.Join(base, home)
			} else {
				opts.Home = filepath.Join(base, "no-such-home")
			}
			c, err := Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			wantFile := ""
			if tt.wantFile != "" {
				wantFile = filepath.Join(base, tt.wantFile)
			}
			if c.ProjectFile != wantFile {
				t.Errorf("project file %q, want %q", c.ProjectFile, wantFile)
			}
			if want := filepath.Join(base, tt.wantRoot); c.ProjectRoot != want {
				t.Errorf("project root %q, want %q", c.ProjectRoot, want)
			}
			if wantFile == "" && c.Model.Name != "" {
				t.Errorf("a pi.toml was applied: model %q", c.Model.Name)
			}
		})
	}
}

// TestProjectSearchNeverReadsRoot: a cwd of / has no project file and no
// error (the file-system root is never searched; the test cannot plant
// /pi.toml, so it checks the walk's edge does not fail).
func TestProjectSearchAtFileSystemRoot(t *testing.T) {
	c, err := Load(LoadOptions{Cwd: "/", PIHome: t.TempDir(), Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if c.ProjectFile != "" || c.ProjectRoot != "/" {
		t.Errorf("file %q root %q", c.ProjectFile, c.ProjectRoot)
	}
}

// TestProjectSearchUsesHOME: without LoadOptions.Home, $HOME bounds the
// search.
func TestProjectSearchUsesHOME(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(base, "pi.toml"), "[model]\nname = \"above-home\"\n")
	if err := os.MkdirAll(filepath.Join(base, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "me", "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(base, "me"))
	c, err := Load(LoadOptions{Cwd: filepath.Join(base, "me", "w"), PIHome: filepath.Join(base, "pihome")})
	if err != nil {
		t.Fatal(err)
	}
	if c.ProjectFile != "" || c.Model.Name != "" {
		t.Errorf("pi.toml above $HOME applied: file %q model %q", c.ProjectFile, c.Model.Name)
	}
	// The same tree without the $HOME bound would find it: the test can fail.
	c, err = Load(LoadOptions{Cwd: filepath.Join(base, "me", "w"), PIHome: filepath.Join(base, "pihome"), Home: filepath.Join(base, "elsewhere")})
	if err != nil {
		t.Fatal(err)
	}
	if c.ProjectFile != filepath.Join(base, "pi.toml") {
		t.Errorf("control: file %q", c.ProjectFile)
	}
}
