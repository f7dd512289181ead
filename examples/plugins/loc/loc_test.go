//go:build !wasip1

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/tool"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func load(t *testing.T, root string, fs ...string) *plugin.Loaded {
	wasm := plugin.BuildGo(t, "examples/plugins/loc")
	return plugin.Load(t, wasm, root, extensions.Spec{Name: "loc", Grants: extensions.Grants{FS: fs}})
}

func TestLoc(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"main.go":            "package main\n\nfunc main() {}\n",              // 3 lines
		"pkg/util.go":        "package pkg\n\n// A is a.\nfunc A() {}\nvar x", // 5 lines, no final newline
		"README.md":          "# t\n\ntext\n",                                 // 3 lines
		"scripts/run.sh":     "#!/bin/sh\necho hi\n",                          // 2 lines
		"data.bin":           "\x00\x01\x02\n",                                // unknown: skipped
		".git/config":        "[core]\n",                                      // skipped
		".git/hooks/pre.sh":  "a\nb\nc\nd\n",                                  // skipped with .git
		"vendor/x/lib.go":    "package x\n",                                   // 1 line
		"empty/nothing.json": "",                                              // 0 lines
	})
	l := load(t, root, "ro:.")
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"whole project", map[string]any{}, "Go: 3 files, 9 lines\nMarkdown: 1 file, 3 lines\nShell: 1 file, 2 lines\nJSON: 1 file, 0 lines\nTotal: 6 files, 14 lines"},
		{"dot", map[string]any{"path": "."}, "Go: 3 files, 9 lines\nMarkdown: 1 file, 3 lines\nShell: 1 file, 2 lines\nJSON: 1 file, 0 lines\nTotal: 6 files, 14 lines"},
		{"subfolder", map[string]any{"path": "pkg"}, "Go: 1 file, 5 lines\nTotal: 1 file, 5 lines"},
		{"absolute", map[string]any{"path": filepath.Join(root, "scripts")}, "Shell: 1 file, 2 lines\nTotal: 1 file, 2 lines"},
		{"through .git", map[string]any{"path": ".git/.."}, "Go: 3 files, 9 lines\nMarkdown: 1 file, 3 lines\nShell: 1 file, 2 lines\nJSON: 1 file, 0 lines\nTotal: 6 files, 14 lines"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := l.Run(t, "loc", tc.args)
			if r.IsError {
				t.Fatalf("error result: %s\nlogs:\n%s", r.Text(), l.Logs())
			}
			if got := r.Text(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	t.Run("details", func(t *testing.T) {
		r := l.Run(t, "loc", map[string]any{"path": "pkg"})
		b, err := json.Marshal(r.Details)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Languages []struct {
				Language     string
				Files, Lines int
			}
			Total struct{ Files, Lines int }
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("details %s: %v", b, err)
		}
		if len(d.Languages) != 1 || d.Languages[0].Language != "Go" || d.Total.Lines != 5 {
			t.Errorf("details %s", b)
		}
	})
}

func TestLocErrors(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"src/a.go": "package a\n", "file.go": "package f\n"})
	outside := t.TempDir()
	write(t, outside, map[string]string{"b.go": "package b\n"})
	tests := []struct {
		name  string
		fs    []string
		args  any
		wants []string
	}{
		{"outside the grant", []string{"ro:."}, map[string]any{"path": outside}, []string{"cannot read " + outside, `fs = ["ro:...`}},
		{"no grant at all", nil, map[string]any{}, []string{"cannot read"}},
		{"grant of a subfolder only", []string{"ro:src"}, map[string]any{"path": "."}, []string{"cannot read ."}},
		{"not a folder", []string{"ro:."}, map[string]any{"path": "file.go"}, []string{"file.go is not a folder"}},
		{"path of the wrong type", []string{"ro:."}, map[string]any{"path": 3}, []string{`Validation failed for tool "loc"`, "path"}},
		{"unknown argument", []string{"ro:."}, map[string]any{"dir": "."}, []string{`Validation failed for tool "loc"`, "dir"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := load(t, root, tc.fs...)
			r := l.Run(t, "loc", tc.args)
			if !r.IsError {
				t.Fatalf("want an error result, got %q", r.Text())
			}
			for _, w := range tc.wants {
				if !strings.Contains(r.Text(), w) {
					t.Errorf("error %q does not contain %q", r.Text(), w)
				}
			}
		})
	}
	t.Run("subfolder grant counts the subfolder", func(t *testing.T) {
		l := load(t, root, "ro:src")
		if r := l.Run(t, "loc", map[string]any{"path": "src"}); r.IsError || r.Text() != "Go: 1 file, 1 line\nTotal: 1 file, 1 line" {
			t.Errorf("got %q (isError %v)", r.Text(), r.IsError)
		}
	})
}

func TestLocReportsProgress(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 1200 {
		files[fmt.Sprintf("d%d/f%d.py", i%7, i)] = "x = 1\n"
	}
	write(t, root, files)
	l := load(t, root, "ro:.")
	var mu sync.Mutex
	var updates []string
	raw, _ := json.Marshal(map[string]any{})
	r := tool.Run(context.Background(), l.Tools, l.Hooks, "loc", "c1", raw, func(p tool.Result) {
		mu.Lock()
		defer mu.Unlock()
		updates = append(updates, p.Text())
	})
	if r.IsError || r.Text() != "Python: 1200 files, 1200 lines\nTotal: 1200 files, 1200 lines" {
		t.Fatalf("got %q", r.Text())
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"Counted 500 files…", "Counted 1000 files…"}; strings.Join(updates, "|") != strings.Join(want, "|") {
		t.Errorf("updates %q, want %q", updates, want)
	}
}

// BenchmarkLoc measures counting a tree of 1000 small files in 10 folders
// through the real host (the guest walks the folder over WASI).
func BenchmarkLoc(b *testing.B) {
	root := b.TempDir()
	for i := range 1000 {
		p := filepath.Join(root, fmt.Sprintf("d%d", i%10), fmt.Sprintf("f%d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("line of code\n", 40)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	wasm := plugin.BuildGo(b, "examples/plugins/loc")
	l := plugin.Load(b, wasm, root, extensions.Spec{Name: "loc", Grants: extensions.Grants{FS: []string{"ro:."}}})
	for b.Loop() {
		if r := l.Run(b, "loc", map[string]any{}); r.Text() != "Go: 1000 files, 40000 lines\nTotal: 1000 files, 40000 lines" {
			b.Fatal(r.Text())
		}
	}
}
