package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/runtime/tool"
)

var findFixture = map[string]string{
	".gitignore":           "dist/\n*.log\n",
	"src/app.ts":           "",
	"src/app.spec.ts":      "",
	"src/config.json":      "",
	"src/lib/util.ts":      "",
	"src/lib/util.spec.ts": "",
	"lib/src/deep.ts":      "",
	"README.md":            "",
	"Docs/Guide.MD":        "",
	"package.json":         "",
	"dist/out.js":          "",
	"x.log":                "",
	".git/config":          "",
	".github/ci.yml":       "",
	"empty/":               "",
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, findFixture)
	if err := os.Symlink("src", filepath.Join(dir, "src-link")); err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string { return filepath.Join(dir, p) }
	lines := func(l ...string) string { return strings.Join(l, "\n") }
	tests := []struct {
		name    string
		args    string
		want    string
		isError bool
	}{
		{"name glob at any depth", `{"pattern":"*.ts"}`, lines("lib/src/deep.ts", "src/app.spec.ts", "src/app.ts", "src/lib/util.spec.ts", "src/lib/util.ts"), false},
		{"**/ glob", `{"pattern":"**/*.json"}`, lines("package.json", "src/config.json"), false},
		{"path glob gets **/ in front", `{"pattern":"src/*.ts"}`, lines("lib/src/deep.ts", "src/app.spec.ts", "src/app.ts"), false},
		{"path glob with **", `{"pattern":"src/**/*.spec.ts"}`, lines("src/app.spec.ts", "src/lib/util.spec.ts"), false},
		{"leading / anchors", `{"pattern":"/src/*.ts"}`, lines("src/app.spec.ts", "src/app.ts"), false},
		{"leading ./ anchors", `{"pattern":"./src/*.ts"}`, lines("src/app.spec.ts", "src/app.ts"), false},
		{"absolute pattern inside the search path", fmt.Sprintf(`{"pattern":%q}`, abs("src")+"/*.json"), "src/config.json", false},
		{"directories end in /", `{"pattern":"src"}`, lines("lib/src/", "src/"), false},
		{"a trailing / matches directories only", `{"pattern":"s*/"}`, lines("lib/src/", "src/"), false},
		{"a trailing / on a path pattern", `{"pattern":"src/l*/"}`, "src/lib/", false},
		{"symlink listed, not followed", `{"pattern":"src-*"}`, "src-link", false},
		{"smart case: lower-case pattern ignores case", `{"pattern":"*.md"}`, lines("Docs/Guide.MD", "README.md"), false},
		{"smart case: upper-case pattern is exact", `{"pattern":"*.MD"}`, "Docs/Guide.MD", false},
		{"braces", `{"pattern":"*.{json,yml}"}`, lines(".github/ci.yml", "package.json", "src/config.json"), false},
		{"hidden files included, .git skipped", `{"pattern":"c*"}`, lines(".github/ci.yml", "src/config.json"), false},
		{"gitignored files left out", `{"pattern":"*.{log,js}"}`, "No files found matching pattern", false},
		{"** lists everything", `{"pattern":"**","path":"src"}`, lines("app.spec.ts", "app.ts", "config.json", "lib/", "lib/util.spec.ts", "lib/util.ts"), false},
		{"relative to path", `{"pattern":"*.ts","path":"src/lib"}`, lines("util.spec.ts", "util.ts"), false},
		{"limit reached", `{"pattern":"*","limit":3}`, lines(".github/", ".github/ci.yml", ".gitignore") + "\n\n[3 results limit reached. Use limit=6 for more, or refine pattern]", false},
		{"limit equal to the count has no notice", `{"pattern":"*.ts","limit":5}`, lines("lib/src/deep.ts", "src/app.spec.ts", "src/app.ts", "src/lib/util.spec.ts", "src/lib/util.ts"), false},
		{"no match", `{"pattern":"*.rs"}`, "No files found matching pattern", false},
		{"path not found", `{"pattern":"*","path":"nope"}`, "Path not found: " + abs("nope"), true},
		{"path is a file", `{"pattern":"*","path":"README.md"}`, "Not a directory: " + abs("README.md"), true},
		{"empty pattern", `{"pattern":""}`, "invalid pattern: must not be empty (use '*' to match every name)", true},
		{"bad pattern names the field", `{"pattern":"[a"}`, `invalid pattern "[a": not a valid glob pattern`, true},
		{"missing pattern", `{"path":"."}`, "Validation failed for tool \"find\":\n  - pattern: must have required property 'pattern'", true},
		{"unknown field", `{"pattern":"*","type":"f"}`, `find: decode arguments: json: unknown field "type"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := callSearch(context.Background(), t, dir, "find", tt.args)
			got, _, _ := strings.Cut(r.Text(), "\n\nReceived arguments")
			if got != tt.want || r.IsError != tt.isError {
				t.Errorf("find %s\n got (isError=%v):\n%s\nwant (isError=%v):\n%s", tt.args, r.IsError, got, tt.isError, tt.want)
			}
		})
	}
}

// TestFindByteLimit fills more than 50KB of paths: whole lines are kept up
// to the limit and both notices can show.
func TestFindByteLimit(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	var all []string
	for i := range 800 {
		name := fmt.Sprintf("f%03d-%s.txt", i, strings.Repeat("n", 60))
		files[name] = ""
		all = append(all, name)
	}
	writeTree(t, dir, files)
	var kept []string
	size := -1
	for _, n := range all {
		if size+1+len(n) > output.DefaultMaxBytes {
			break
		}
		size += 1 + len(n)
		kept = append(kept, n)
	}
	tests := []struct{ args, notice, details string }{
		{`{"pattern":"*.txt"}`, "[50.0KB limit reached]", `"truncation"`},
		{`{"pattern":"*.txt","limit":799}`, "[799 results limit reached. Use limit=1598 for more, or refine pattern. 50.0KB limit reached]", `"resultLimitReached":799`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			r := callSearch(context.Background(), t, dir, "find", tt.args)
			want := strings.Join(kept, "\n") + "\n\n" + tt.notice
			if got := r.Text(); got != want {
				t.Errorf("got %d bytes ending %q, want %d bytes ending %q", len(got), got[max(0, len(got)-120):], len(want), tt.notice)
			}
			d, _ := json.Marshal(r.Details)
			if !strings.Contains(string(d), tt.details) {
				t.Errorf("details %s lack %s", d, tt.details)
			}
		})
	}
}

func TestFindDefinitionTexts(t *testing.T) {
	d := findDefinition()
	if d.Name != "find" || d.Label != "find" || d.Source.Kind != tool.SourceBuiltin || d.ExecutionMode != tool.Parallel {
		t.Errorf("definition: %+v", d)
	}
	if want := "Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is hit first)."; d.Description != want {
		t.Errorf("description %q", d.Description)
	}
	if d.PromptSnippet != "Find files by glob pattern (respects .gitignore)" {
		t.Errorf("snippet %q", d.PromptSnippet)
	}
	assertSchema(t, d.Parameters, `{"type":"object","required":["pattern"],"properties":{`+
		`"pattern":{"type":"string","description":"Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"},`+
		`"path":{"type":"string","description":"Directory to search in (default: current directory)"},`+
		`"limit":{"type":"number","description":"Maximum number of results (default: 1000)"}}}`)
}

// findMatchSlow is the matcher without its compiled name shapes: every
// subject goes to doublestar, as before they existed.
func findMatchSlow(m *findMatcher, rel string, isDir bool) bool {
	slow := *m
	slow.name = nameMatch{}
	return slow.match(rel, isDir)
}

var findShapePatterns = []string{
	"*.go", "**/*.go", "*_test.go", "Makefile", "makefile", "cmd*", "*mock*", "*", "**/*", "*.GO", "**/README.md",
	"file042.go", "**/file0*", "*.", ".*", "*é*", "*\u00c9.txt", "**/*.go/", "*.go/", "src/**/*.go", "a*b", "*\xff",
	"*\ufffd", "[ab].go", "*.{go,md}", "\\*.go", "?.go", "**/**/x.go",
}

var findShapeNames = []string{
	"main.go", "MAIN.GO", "x_test.go", "Makefile", "makefile", "cmd", "cmdline", "amockb", "mock", ".go", "go",
	"a/b/main.go", "a/b/Main.Go", "src/x/y.go", "é.go", "Éa.txt", "éa.txt", "\u0130.go", "a\xffb.go", "\xff",
	"\xe2.go", "\ufffd", "file042.go", "dir/file042.go", "ab", "a.go/b", "K.go", "\u212a.go",
}

// TestFindShapesMatchDoublestar: the compiled name shapes answer exactly
// what doublestar answers, for every pattern and name here, files and
// directories.
func TestFindShapesMatchDoublestar(t *testing.T) {
	for _, p := range findShapePatterns {
		m, err := newFindMatcher(p, "/search")
		if err != nil {
			continue
		}
		for _, n := range findShapeNames {
			for _, dir := range []bool{false, true} {
				if got, want := m.match(n, dir), findMatchSlow(m, n, dir); got != want {
					t.Errorf("pattern %q, %q (dir %v): compiled %v, doublestar %v", p, n, dir, got, want)
				}
			}
		}
	}
}

func FuzzFindShapes(f *testing.F) {
	for i, p := range findShapePatterns {
		f.Add(p, findShapeNames[i%len(findShapeNames)])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		m, err := newFindMatcher(pattern, "/search")
		if err != nil || name == "" || strings.HasSuffix(name, "/") || strings.HasPrefix(name, "/") || strings.Contains(name, "//") {
			return
		}
		if got, want := m.match(name, false), findMatchSlow(m, name, false); got != want {
			t.Fatalf("pattern %q, %q: compiled %v, doublestar %v", pattern, name, got, want)
		}
	})
}
