package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestAppendExtensionCreatesFileAndRoundTrips(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "project") // does not exist yet
	file := filepath.Join(dir, "pi.toml")
	e := Extension{
		Name:     "loc",
		Path:     filepath.Join(dir, ".pi", "extensions", "loc.wasm"),
		SHA256:   strings.ToUpper(shaA),
		Override: true,
		Grants:   Grants{FS: []string{"ro:.", "rw:out"}, Exec: []string{"git"}, Env: []string{"HOME"}},
		Limits:   Limits{MemoryMB: 64, TimeoutMS: 30000},
		Config: map[string]any{
			"flag":    true,
			"list":    []any{float64(1), "two"},
			"n":       2.5,
			"nested":  map[string]any{"a": int64(1), "b": map[string]any{"c": "d"}},
			"odd key": "a\"b\nc",
		},
		Scope: "ignored", File: "ignored", Line: 99,
	}
	if err := AppendExtension(file, e); err != nil {
		t.Fatal(err)
	}
	want := `[[extensions]]
name = "loc"
path = ".pi/extensions/loc.wasm"
sha256 = "` + shaA + `"
override = true

[extensions.grants]
fs = ["ro:.", "rw:out"]
exec = ["git"]
env = ["HOME"]

[extensions.limits]
memory_mb = 64
timeout_ms = 30000

[extensions.config]
flag = true
list = [1, "two"]
n = 2.5
nested = { a = 1, b = { c = "d" } }
"odd key" = "a\"b\nc"
`
	if got := readString(t, file); got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
	c, err := Load(LoadOptions{Cwd: dir, PIHome: t.TempDir(), Trust: true})
	if err != nil {
		t.Fatal(err)
	}
	loaded := Extension{
		Name:     "loc",
		Path:     e.Path,
		SHA256:   shaA,
		Override: true,
		Grants:   e.Grants,
		Limits:   e.Limits,
		Config: map[string]any{
			"flag": true, "list": []any{int64(1), "two"}, "n": 2.5,
			"nested":  map[string]any{"a": int64(1), "b": map[string]any{"c": "d"}},
			"odd key": "a\"b\nc",
		},
		Scope: "project", File: file, Line: 1,
	}
	if len(c.Extensions) != 1 || !reflect.DeepEqual(c.Extensions[0], loaded) {
		t.Errorf("loaded:\n %+v\nwant\n %+v", c.Extensions, loaded)
	}
}

func TestAppendExtension(t *testing.T) {
	minimal := Extension{Name: "fmt", Path: "tools/fmt.wasm", SHA256: shaB}
	minimalBlock := "[[extensions]]\nname = \"fmt\"\npath = \"tools/fmt.wasm\"\nsha256 = \"" + shaB + "\"\n"
	const existing = "# my settings\n[model]\nname = \"m\" # trailing comment\n\n" +
		"[[extensions]]\nname = \"loc\"\npath = \"loc.wasm\"\nsha256 = \"" + shaA + "\"\n[extensions.config]\nx = 1\n"
	tests := []struct {
		name    string
		old     string // "" = no file
		e       Extension
		want    string // whole file after; "" = unchanged (refused)
		wantErr string
		is      error
	}{
		{name: "after a file ending in a newline", old: existing, e: minimal, want: existing + "\n" + minimalBlock},
		{name: "after a file without a final newline", old: "[model]\nname = \"m\"", e: minimal, want: "[model]\nname = \"m\"\n\n" + minimalBlock},
		{name: "after a blank line", old: "[model]\nname = \"m\"\n\n", e: minimal, want: "[model]\nname = \"m\"\n\n" + minimalBlock},
		{name: "path outside the folder stays absolute", e: Extension{Name: "x", Path: "/opt/ext/x.wasm", SHA256: shaC},
			want: "[[extensions]]\nname = \"x\"\npath = \"/opt/ext/x.wasm\"\nsha256 = \"" + shaC + "\"\n"},
		{name: "empty grants and limits are left out", e: Extension{Name: "x", Path: "x.wasm", SHA256: shaC, Grants: Grants{FS: []string{}}, Config: map[string]any{}},
			want: "[[extensions]]\nname = \"x\"\npath = \"x.wasm\"\nsha256 = \"" + shaC + "\"\n\n[extensions.config]\n"},
		{name: "name already there", old: existing, e: Extension{Name: "loc", Path: "other.wasm", SHA256: shaB},
			wantErr: `append extension "loc" to FILE (line 5): an extension of that name is already there`, is: ErrExtensionExists},
		{name: "bad sha256 writes nothing", e: Extension{Name: "x", Path: "x.wasm", SHA256: "nope"},
			wantErr: `append extension "x" to FILE: the result would not load: FILE:4: key "extensions[0].sha256" must be 64 hex digits, got "nope"`},
		{name: "bad name writes nothing", old: existing, e: Extension{Name: "X", Path: "x.wasm", SHA256: shaC},
			wantErr: `append extension "X" to FILE: the result would not load: FILE:13: key "extensions[1].name": "X" is not an extension name (want [a-z][a-z0-9_-]*)`},
		{name: "null in config", e: Extension{Name: "x", Path: "x.wasm", SHA256: shaC, Config: map[string]any{"k": nil}},
			wantErr: `append extension "x" to FILE: config key "k": null cannot be written in TOML`},
		{name: "existing file does not load", old: "[model]\nnmae = \"m\"\n", e: minimal,
			wantErr: `append extension "fmt" to FILE: the file does not load: FILE:2: unknown key "model.nmae" (known keys: base_url, name, provider, api_key_env, images, context_window)`},
		{name: "inline extensions array cannot grow", old: "extensions = []\n", e: minimal,
			wantErr: `append extension "fmt" to FILE: the result would not load: FILE:3:3: syntax error: Key 'extensions' was already created and cannot be used as an array.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "pi.toml")
			if tt.old != "" {
				writeFile(t, file, tt.old)
			}
			err := AppendExtension(file, tt.e)
			if tt.wantErr != "" {
				want := strings.ReplaceAll(tt.wantErr, "FILE", file)
				if err == nil || err.Error() != want {
					t.Fatalf("err = %v\nwant  %s", err, want)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("errors.Is(%v) = false", tt.is)
				}
				if tt.old == "" {
					if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("file written on refusal: %v", err)
					}
				} else if got := readString(t, file); got != tt.old {
					t.Errorf("file changed on refusal:\n%s", got)
				}
				entries, _ := os.ReadDir(dir)
				if len(entries) > 1 || (tt.old == "" && len(entries) > 0) {
					t.Errorf("stray files: %v", entries)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readString(t, file); got != tt.want {
				t.Errorf("file:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestAppendKeepsFileMode(t *testing.T) {
	file := writeFile(t, filepath.Join(t.TempDir(), "pi.toml"), "[model]\n")
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AppendExtension(file, Extension{Name: "a", Path: "a.wasm", SHA256: shaA}); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", info.Mode(), err)
	}
}

// threeExtensions has comments, blank lines and subtables around its blocks.
const threeExtensions = `# my project
[model]
name = "m"

# counts lines
[[extensions]]
name = "loc"
path = "loc.wasm"
sha256 = "` + shaA + `"

[extensions.grants]
fs = ["ro:."]

# formats code
[[extensions]]
name = "fmt"
path = "fmt.wasm"
sha256 = "` + shaB + `"
[extensions.config]
style = "x"

[[extensions]]
name = "last"
path = "last.wasm"
sha256 = "` + shaC + `"
`

func TestRemoveExtension(t *testing.T) {
	tests := []struct {
		name, old, remove, want string
	}{
		{name: "middle block with its comment and subtable", old: threeExtensions, remove: "fmt", want: `# my project
[model]
name = "m"

# counts lines
[[extensions]]
name = "loc"
path = "loc.wasm"
sha256 = "` + shaA + `"

[extensions.grants]
fs = ["ro:."]

[[extensions]]
name = "last"
path = "last.wasm"
sha256 = "` + shaC + `"
`},
		{name: "first block; the next block's comment stays", old: threeExtensions, remove: "loc", want: `# my project
[model]
name = "m"

# formats code
[[extensions]]
name = "fmt"
path = "fmt.wasm"
sha256 = "` + shaB + `"
[extensions.config]
style = "x"

[[extensions]]
name = "last"
path = "last.wasm"
sha256 = "` + shaC + `"
`},
		{name: "last block takes the blank line above it", old: threeExtensions, remove: "last", want: `# my project
[model]
name = "m"

# counts lines
[[extensions]]
name = "loc"
path = "loc.wasm"
sha256 = "` + shaA + `"

[extensions.grants]
fs = ["ro:."]

# formats code
[[extensions]]
name = "fmt"
path = "fmt.wasm"
sha256 = "` + shaB + `"
[extensions.config]
style = "x"
`},
		{name: "subtable after another table still belongs to the block",
			old:    "[[extensions]]\nname = \"a\"\npath = \"a.wasm\"\nsha256 = \"" + shaA + "\"\n[model]\nname = \"m\"\n[extensions.grants]\nfs = [\"ro:.\"]\n[tools]\nactive = []\n",
			remove: "a",
			want:   "[model]\nname = \"m\"\n[tools]\nactive = []\n"},
		{name: "only block, CRLF line ends", old: "[model]\r\nname = \"m\"\r\n\r\n[[extensions]]\r\nname = \"a\"\r\npath = \"a.wasm\"\r\nsha256 = \"" + shaA + "\"\r\n",
			remove: "a", want: "[model]\r\nname = \"m\"\r\n"},
		{name: "a string line starting with # is not a comment",
			old:    ext("a", shaA) + "[extensions.config]\nnote = \"\"\"\n# not a comment\"\"\"\n" + ext("b", shaB),
			remove: "b", want: ext("a", shaA) + "[extensions.config]\nnote = \"\"\"\n# not a comment\"\"\"\n"},
		{name: "header text inside a multi-line string is not a header",
			old:    ext("a", shaA) + "[extensions.config]\nnote = \"\"\"\n[[extensions]]\nname = \"b\"\n\"\"\"\n" + "\n" + ext("b", shaB),
			remove: "a", want: ext("b", shaB)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, filepath.Join(t.TempDir(), "pi.toml"), tt.old)
			if err := RemoveExtension(file, tt.remove); err != nil {
				t.Fatal(err)
			}
			if got := readString(t, file); got != tt.want {
				t.Errorf("file:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestRemoveExtensionRefuses(t *testing.T) {
	tests := []struct {
		name, old, remove, want string
		is                      error
	}{
		{name: "unknown name", old: threeExtensions, remove: "nope",
			want: `remove extension "nope" from FILE: no extension of that name (installed: loc, fmt, last)`, is: ErrExtensionNotFound},
		{name: "no extensions", old: "[model]\n", remove: "nope",
			want: `remove extension "nope" from FILE: no extension of that name (none installed)`, is: ErrExtensionNotFound},
		{name: "inline array", old: "extensions = [{ name = \"a\", path = \"a.wasm\", sha256 = \"" + shaA + "\" }]\n", remove: "a",
			want: `remove extension "a" from FILE: it is written inline (extensions = [...]); edit the file by hand`},
		{name: "not TOML", old: "[model\n", remove: "a",
			want: `remove extension "a": FILE:1:7: syntax error: expected '.' or ']' to end table name, but got '\n' instead`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, filepath.Join(t.TempDir(), "pi.toml"), tt.old)
			err := RemoveExtension(file, tt.remove)
			want := strings.ReplaceAll(tt.want, "FILE", file)
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant  %s", err, want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v) = false", tt.is)
			}
			if got := readString(t, file); got != tt.old {
				t.Errorf("file changed:\n%s", got)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		err := RemoveExtension(filepath.Join(t.TempDir(), "pi.toml"), "a")
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestAppendThenRemoveRestoresBytes(t *testing.T) {
	file := writeFile(t, filepath.Join(t.TempDir(), "pi.toml"), threeExtensions)
	e := Extension{Name: "new", Path: "n.wasm", SHA256: shaA, Grants: Grants{Exec: []string{"git"}}, Config: map[string]any{"k": "v"}}
	if err := AppendExtension(file, e); err != nil {
		t.Fatal(err)
	}
	if err := RemoveExtension(file, "new"); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, file); got != threeExtensions {
		t.Errorf("file after append+remove:\n%s", got)
	}
}
