package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

// benchTree writes a generated project of about 20k files (20 packages × 10
// folders × 100 files of ~40 lines, ~30MB), with a root .gitignore, a nested
// one, and an ignored node_modules of 1000 more files the walk must skip.
func benchTree(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/\n*.tmp\n/build\n"), 0o644))
	var body strings.Builder
	for l := range 40 {
		fmt.Fprintf(&body, "\t// line %d of a generated file with some ordinary source text in it\n", l)
	}
	text := body.String()
	for p := range 20 {
		for d := range 10 {
			folder := filepath.Join(dir, fmt.Sprintf("pkg%02d", p), fmt.Sprintf("dir%d", d))
			must(os.MkdirAll(folder, 0o755))
			if d == 0 {
				must(os.WriteFile(filepath.Join(folder, ".gitignore"), []byte("*.gen.go\n!keep.gen.go\n"), 0o644))
			}
			for f := range 100 {
				name := fmt.Sprintf("file%03d.go", f)
				content := fmt.Sprintf("package p%d\n\nfunc Handler%d_%d_%d() {}\n%s", p, p, d, f, text)
				if f == 42 {
					content += "// NEEDLE: the rare line\n"
				}
				must(os.WriteFile(filepath.Join(folder, name), []byte(content), 0o644))
			}
		}
	}
	nm := filepath.Join(dir, "node_modules", "dep")
	must(os.MkdirAll(nm, 0o755))
	for f := range 1000 {
		must(os.WriteFile(filepath.Join(nm, fmt.Sprintf("m%d.js", f)), []byte("NEEDLE\n"), 0o644))
	}
	return dir
}

// BenchmarkSearch20k runs grep and find over one generated tree of ~21k
// files (made once: writing it costs far more than a search).
func BenchmarkSearch20k(b *testing.B) {
	dir := benchTree(b)
	greps := []struct {
		name string
		args grepArgs
	}{
		// 200 matching lines in 20k files; limit 1000 so every file is read.
		{"literal-rare", grepArgs{Pattern: "NEEDLE", Literal: benchPtr(true), Limit: benchPtrF(1000)}},
		{"regex-rare", grepArgs{Pattern: `NEE+DLE:\s+\w+`, Limit: benchPtrF(1000)}},
		{"ignoreCase-rare", grepArgs{Pattern: "needle", IgnoreCase: benchPtr(true), Limit: benchPtrF(1000)}},
		{"ignoreCase-regex-rare", grepArgs{Pattern: "nee+dle:", IgnoreCase: benchPtr(true), Limit: benchPtrF(1000)}},
		{"context-2-rare", grepArgs{Pattern: "NEEDLE", Context: benchPtrF(2), Limit: benchPtrF(1000)}},
		{"glob-rare", grepArgs{Pattern: "NEEDLE", Glob: benchPtr("pkg1*/**/*.go"), Limit: benchPtrF(1000)}},
		// A match in every file: stops after the default 100.
		{"every-file-limit-100", grepArgs{Pattern: `func Handler\d+_`}},
	}
	for _, c := range greps {
		b.Run("grep/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := runGrep(context.Background(), tool.Context{Cwd: dir}, c.args)
				if err != nil || r.Text() == "No matches found" {
					b.Fatalf("grep: %v %q", err, r.Text())
				}
			}
		})
	}
	finds := []struct {
		name string
		args findArgs
	}{
		{"name-rare", findArgs{Pattern: "file042.go"}},
		{"path-glob", findArgs{Pattern: "pkg0*/dir1/*.go"}},
		{"all-limit-1000", findArgs{Pattern: "*.go"}},
	}
	for _, c := range finds {
		b.Run("find/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := runFind(context.Background(), tool.Context{Cwd: dir}, c.args)
				if err != nil || r.Text() == "No files found matching pattern" {
					b.Fatalf("find: %v %q", err, r.Text())
				}
			}
		})
	}
}

func BenchmarkLs5k(b *testing.B) {
	dir := b.TempDir()
	for i := range 5000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("Entry_%04d.txt", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := runLs(context.Background(), tool.Context{Cwd: dir}, lsArgs{Limit: benchPtrF(5000)}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchPtr[T any](v T) *T       { return &v }
func benchPtrF(v float64) *float64 { return &v }

// BenchmarkSearchReal runs find and grep over a real tree: PI_BENCH_TREE,
// or GOROOT (about 15k files) by default. The figures in
// docs/performance.md come from bench/search.sh, which runs the same calls
// through the pi binary next to GNU find, fd and ripgrep.
func BenchmarkSearchReal(b *testing.B) {
	dir := os.Getenv("PI_BENCH_TREE")
	if dir == "" {
		dir = runtime.GOROOT()
	}
	many := benchPtrF(1 << 30)
	finds := []struct {
		name string
		args findArgs
	}{
		{"find/**/*.go", findArgs{Pattern: "**/*.go", Limit: many}},
		{"find/*_test.go", findArgs{Pattern: "*_test.go", Limit: many}},
		{"find/src/*/*.go", findArgs{Pattern: "src/*/*.go", Limit: many}},
	}
	for _, c := range finds {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := runFind(context.Background(), tool.Context{Cwd: dir}, c.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	greps := []struct {
		name string
		args grepArgs
	}{
		{"grep/literal", grepArgs{Pattern: "CloseWithError", Literal: benchPtr(true), Limit: many}},
		{"grep/regex", grepArgs{Pattern: `func \w+Close\(`, Limit: many}},
		{"grep/glob", grepArgs{Pattern: "CloseWithError", Glob: benchPtr("*.go"), Limit: many}},
		{"grep/ignoreCase", grepArgs{Pattern: "closewitherror", IgnoreCase: benchPtr(true), Limit: many}},
	}
	for _, c := range greps {
		for _, w := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%s/workers=%d", c.name, w), func(b *testing.B) {
				old := grepWorkers
				grepWorkers = func() int { return w }
				defer func() { grepWorkers = old }()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := runGrep(context.Background(), tool.Context{Cwd: dir}, c.args); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
