package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to Load as a project pi.toml (seeds under
// testdata/fuzz/FuzzLoad). Load must not panic; every error must name the
// file; and in every document the TOML library accepts, every value must
// have its own line in the key index that error messages use.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(risky))
	f.Add([]byte(threeExtensions))
	f.Add([]byte("[tools]\nactive = [\n  \"read\", # c\n]\n"))
	// One folder for all inputs (a worker runs one input at a time):
	// a TempDir per input would make file-system work most of the cost.
	dir := f.TempDir()
	file := filepath.Join(dir, "pi.toml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(LoadOptions{Cwd: dir, PIHome: filepath.Join(dir, "home"), Trust: true})
		if err != nil {
			checkErrorNamesFile(t, err, file)
		} else {
			for _, e := range c.Extensions {
				if e.Line < 1 || e.File != file || !filepath.IsAbs(e.Path) {
					t.Errorf("extension %+v", e)
				}
			}
		}
		raw, err := decodeTOML(file, data)
		if err != nil {
			return
		}
		idx := indexDocument(data)
		lines := strings.Count(string(data), "\n") + 1
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, e := range v {
					walk(joinKey(path, k), e)
				}
				return
			case []map[string]any:
				for i, e := range v {
					walk(indexKey(path, i), e)
				}
				return
			case []any:
				for i, e := range v {
					walk(indexKey(path, i), e)
				}
			}
			if l := idx.lines[path]; l < 1 || l > lines {
				t.Errorf("value %s: line %d, want 1..%d (document %q)", path, l, lines, data)
			}
		}
		walk("", raw)
	})
}

// checkErrorNamesFile checks that err and each error joined in it start
// with the file's path.
func checkErrorNamesFile(t *testing.T, err error, file string) {
	t.Helper()
	if !strings.HasPrefix(err.Error(), file+":") {
		t.Fatalf("error does not start with the file: %v", err)
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			checkErrorNamesFile(t, e, file)
		}
	}
	var ce *Error
	if errors.As(err, &ce) && ce.File != file {
		t.Fatalf("Error.File = %q, want %q", ce.File, file)
	}
}
