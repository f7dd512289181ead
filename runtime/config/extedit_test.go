package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// setSHA writes doc to a pi.toml, sets name's sha256 and returns the file
// after (or the error).
func setSHA(t *testing.T, doc, name, sum string) (string, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "pi.toml")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	err := SetExtensionSHA256(file, name, sum)
	return readString(t, file), err
}

func TestSetExtensionSHA256ChangesOnlyTheDigits(t *testing.T) {
	shaC := strings.Repeat("c", 64)
	doc := `# my project
[model]
name = "m"

# the line counter
[[extensions]]
name = "loc"
path = ".pi/extensions/loc.wasm"
sha256 = "` + shaA + `"   # pinned at install

[extensions.grants]
fs = ["ro:."]

[extensions.config]
note = "` + shaA + `"

[[extensions]]
name = "other"
path = "o.wasm"
sha256 = '` + strings.ToUpper(shaA) + `'
`
	got, err := setSHA(t, doc, "loc", shaC)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(doc, `sha256 = "`+shaA+`"`, `sha256 = "`+shaC+`"`, 1)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// The second entry, single-quoted and upper case, keeps its quotes.
	got, err = setSHA(t, doc, "other", shaC)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(doc, `'`+strings.ToUpper(shaA)+`'`, `'`+shaC+`'`, 1); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSetExtensionSHA256InlineTable(t *testing.T) {
	doc := `extensions = [
  { name = "a", path = "a.wasm", sha256 = "` + shaA + `" },
  { name = "b", path = "b.wasm", sha256 = "` + shaA + `" },
]
`
	got, err := setSHA(t, doc, "b", shaB)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(doc, `"b.wasm", sha256 = "`+shaA, `"b.wasm", sha256 = "`+shaB, 1); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A digest that cannot be told apart on its line, or a file where the
// edit would touch anything else, is refused and the file left as it was.
func TestSetExtensionSHA256RefusesAmbiguousLines(t *testing.T) {
	for name, doc := range map[string]string{
		"two entries on one line": `extensions = [{ name = "a", path = "a.wasm", sha256 = "` + shaA + `" }, { name = "b", path = "b.wasm", sha256 = "` + shaA + `" }]` + "\n",
		"quoted twice":            "[[extensions]]\nname = \"b\"\npath = \"b.wasm\"\nsha256 = \"" + shaA + "\" # was '" + shaA + "'\n",
	} {
		t.Run(name, func(t *testing.T) {
			got, err := setSHA(t, doc, "b", shaB)
			if err == nil || !strings.Contains(err.Error(), "edit the file by hand") {
				t.Errorf("err = %v", err)
			}
			if got != doc {
				t.Errorf("file changed:\n%s", got)
			}
		})
	}
}

func TestSetExtensionSHA256Errors(t *testing.T) {
	doc := "[[extensions]]\nname = \"a\"\npath = \"a.wasm\"\nsha256 = \"" + shaA + "\"\n"
	if _, err := setSHA(t, doc, "nope", shaB); !errors.Is(err, ErrExtensionNotFound) || !strings.Contains(err.Error(), "installed: a") {
		t.Errorf("unknown name: %v", err)
	}
	for _, bad := range []string{"", "xyz", strings.Repeat("g", 64), shaB + "0", shaB[:63] + "\""} {
		got, err := setSHA(t, doc, "a", bad)
		if err == nil || got != doc {
			t.Errorf("sum %q: err %v, file changed: %v", bad, err, got != doc)
		}
	}
	if _, err := setSHA(t, "[[extensions]]\nname = 1\n", "a", shaB); err == nil {
		t.Error("a file that does not load was edited")
	}
}

func TestParseExtensionConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cfg.toml")
	if err := os.WriteFile(file, []byte("greeting = \"from file\"\nkeep = 1\n[t]\nd = 2024-01-02\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ParseExtensionConfig(file, []string{
		`greeting="hi"`, "n=3", "f = 2.5", "on=true", `list=["a", 1]`, "t2={depth=2}", `"odd key"='x'`, "a.b=1",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"greeting": "hi", "keep": int64(1), "t": map[string]any{"d": "2024-01-02"},
		"n": int64(3), "f": 2.5, "on": true, "list": []any{"a", int64(1)},
		"t2": map[string]any{"depth": int64(2)}, `"odd key"`: "x", "a.b": int64(1),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
	if got, err := ParseExtensionConfig("", nil); got != nil || err != nil {
		t.Errorf("nothing given: %v, %v", got, err)
	}
	for _, bad := range []struct{ a, want string }{
		{"greeting=hi", `--ext-config 'greeting="hi"'`},
		{"noequals", "want KEY=VALUE"},
		{"=3", "want KEY=VALUE"},
		{"n=", "is not a TOML value"},
		{"n=nan", "cannot be passed as JSON"},
		{"n=1\nx=2", "is not a TOML value"},
		{`s="a" b`, "is not a TOML value"},
	} {
		if _, err := ParseExtensionConfig("", []string{bad.a}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %q", bad.a, err, bad.want)
		}
	}
	if _, err := ParseExtensionConfig(filepath.Join(t.TempDir(), "missing.toml"), nil); err == nil {
		t.Error("missing file accepted")
	}
	if err := os.WriteFile(file, []byte("a = [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseExtensionConfig(file, nil); err == nil || !strings.Contains(err.Error(), "cfg.toml:1:") {
		t.Errorf("bad file: %v", err)
	}
}
