package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
		checkIndex(t, data)
	})
}

// FuzzParse is FuzzLoad without the file system, so it runs many more
// inputs a second: parsing one file never panics, its errors name the file
// and a line, and every value has its line in the key index.
func FuzzParse(f *testing.F) {
	f.Add([]byte(risky))
	f.Add([]byte(threeExtensions))
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "/p/pi.toml"
		if _, err := parseLayer(file, data, ScopeProject); err != nil {
			checkErrorNamesFile(t, err, file)
		}
		checkIndex(t, data)
	})
}

// checkIndex checks that in a document the TOML library accepts every
// value has its own line in the key index.
func checkIndex(t *testing.T, data []byte) {
	t.Helper()
	raw, err := decodeTOML("pi.toml", data)
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
}

// checkErrorNamesFile checks that err and each error joined in it start
// with the file's path, and that each *Error has a line.
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
	if ce, ok := err.(*Error); ok && (ce.File != file || ce.Line < 1) {
		t.Fatalf("Error without the file or a line: %#v", ce)
	}
}

// FuzzRemoveExtension removes one extension from arbitrary TOML documents
// (seeds under testdata/fuzz/FuzzRemoveExtension). Either it refuses and
// leaves the file alone, or the result still parses and holds exactly the
// same data minus that one element.
func FuzzRemoveExtension(f *testing.F) {
	f.Add([]byte(threeExtensions), uint8(1))
	f.Add([]byte(ext("a", shaA)+"[model]\nname = \"m\"\n[extensions.grants]\nfs = []\n"+ext("b", shaB)), uint8(0))
	f.Add([]byte("# c\n[[extensions]] # x\nname = 'a'\n[[extensions.sub]]\nk = 1\n\n# d\n[[ extensions ]]\nname = \"b\"\n"), uint8(0))
	dir := f.TempDir()
	file := filepath.Join(dir, "pi.toml")
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		before, err := decodeTOML(file, data)
		if err != nil {
			return
		}
		names := extensionNames(before)
		if len(names) == 0 {
			return
		}
		i := int(pick) % len(names)
		i = slices.Index(names, names[i]) // Remove takes the first of that name
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := RemoveExtension(file, names[i]); err != nil {
			if !strings.Contains(err.Error(), "written inline") {
				t.Fatalf("remove %q: %v\ndocument %q", names[i], err, data)
			}
			if got, _ := os.ReadFile(file); string(got) != string(data) {
				t.Fatalf("file changed on refusal")
			}
			return
		}
		out, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		after, err := decodeTOML(file, out)
		if err != nil {
			t.Fatalf("result does not parse: %v\nbefore %q\nafter  %q", err, data, out)
		}
		want := elements(before["extensions"])
		want = slices.Delete(want, i, i+1)
		if got := elements(after["extensions"]); (len(got) > 0 || len(want) > 0) && !reflect.DeepEqual(got, want) {
			t.Fatalf("extensions after removing %d:\n got  %v\n want %v\nbefore %q\nafter  %q", i, got, want, data, out)
		}
		delete(before, "extensions")
		delete(after, "extensions")
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("other data changed:\n got  %v\n want %v\nbefore %q\nafter  %q", after, before, data, out)
		}
	})
}

// elements returns the tables of an array of tables (nil when absent).
func elements(v any) []map[string]any {
	switch v := v.(type) {
	case []map[string]any:
		return slices.Clone(v)
	case []any:
		var out []map[string]any
		for _, e := range v {
			m, _ := e.(map[string]any)
			out = append(out, m)
		}
		return out
	}
	return nil
}

// FuzzAppendExtension appends an extension to arbitrary existing files
// (seeds under testdata/fuzz/FuzzAppendExtension). Either it refuses and
// leaves the file alone, or the old bytes are still the file's prefix and
// the new extension loads back as the file's last one.
func FuzzAppendExtension(f *testing.F) {
	f.Add([]byte(threeExtensions), "new", "ro:.")
	f.Add([]byte("[model]\nname = \"m\""), "loc", "rw:out dir")
	f.Add([]byte("extensions = []\n"), "x", "ro:\"q\"")
	dir := f.TempDir()
	file := filepath.Join(dir, "pi.toml")
	f.Fuzz(func(t *testing.T, old []byte, name, grant string) {
		if err := os.WriteFile(file, old, 0o644); err != nil {
			t.Fatal(err)
		}
		e := Extension{Name: name, Path: filepath.Join(dir, "ext", "x.wasm"), SHA256: shaA, Grants: Grants{FS: []string{grant}}, Config: map[string]any{name: grant}}
		err := AppendExtension(file, e)
		got, rerr := os.ReadFile(file)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			if string(got) != string(old) {
				t.Fatalf("refused (%v) but the file changed", err)
			}
			return
		}
		if !strings.HasPrefix(string(got), string(old)) {
			t.Fatalf("old bytes not kept:\nold %q\nnew %q", old, got)
		}
		l, err := parseLayer(file, got, ScopeProject)
		if err != nil {
			t.Fatalf("appended file does not load: %v", err)
		}
		last := l.extensions[len(l.extensions)-1]
		if last.Name != name || last.Path != e.Path || !slices.Equal(last.Grants.FS, e.Grants.FS) || last.Config[name] != grant {
			t.Fatalf("loaded back %+v, want %+v", last, e)
		}
	})
}
