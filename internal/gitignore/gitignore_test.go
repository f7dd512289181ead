package gitignore

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestWildmatch(t *testing.T) {
	tests := []struct {
		pattern, text string
		want          bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "dir/main.go", false}, // '*' stops at '/'
		{"a?c", "abc", true},
		{"a?c", "a/c", false},
		{"a?c", "aéc", false}, // '?' is one byte, as in git
		{"a??c", "aéc", true},
		{"*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 40), false}, // gives up early instead of trying ~10^8 splits
		{"**/*a*a*a*a*a*a*b", strings.Repeat("a/", 10) + strings.Repeat("a", 30), false},
		{"*a*b", "xaxb", true},
		{"a/*/c", "a/b/c", true},
		{"a/*/c", "a/b/x/c", false},
		{"**/b/**", "a/b/c/d", true},
		{"[abc]x", "bx", true},
		{"[!abc]x", "bx", false},
		{"[^abc]x", "dx", true},
		{"[a-c]x", "cx", true},
		{"[a-c]x", "dx", false},
		{"[]]x", "]x", true},
		{"[[:digit:]]x", "7x", true},
		{"[[:upper:]]x", "ax", false},
		{"[a-", "[a-", true}, // unterminated '[' is literal
		{`\*x`, "*x", true},
		{`\*x`, "ax", false},
		{"**/foo", "foo", true},
		{"**/foo", "a/b/foo", true},
		{"**/foo", "a/b/foox", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**", "a/x/y", true},
		{"a/**", "a", false},
		{"a**b", "axxb", true}, // '**' not a whole component is '*'
		{"a**b", "ax/xb", false},
		{"foo/*", "foo/bar", true},
		{"foo/*", "foo/bar/baz", false},
		{"", "", true},
		{"abc", "abcd", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.text, func(t *testing.T) {
			if got := wildmatch(tt.pattern, tt.text); got != tt.want {
				t.Errorf("wildmatch(%q, %q) = %v, want %v", tt.pattern, tt.text, got, tt.want)
			}
		})
	}
}

func TestParseIgnoreLine(t *testing.T) {
	tests := []struct {
		line string
		want ignoreRule
		ok   bool
	}{
		{"", ignoreRule{}, false},
		{"# comment", ignoreRule{}, false},
		{"   ", ignoreRule{}, false},
		{`\#hash`, ignoreRule{glob: `\#hash`}, true},
		{"!keep.log", ignoreRule{glob: "keep.log", negate: true}, true},
		{`\!bang`, ignoreRule{glob: `\!bang`}, true},
		{"build/", ignoreRule{glob: "build", dirOnly: true}, true},
		{"/top", ignoreRule{glob: "top", anchored: true}, true},
		{"a/b/", ignoreRule{glob: "a/b", dirOnly: true, anchored: true}, true},
		{"x.txt   ", ignoreRule{glob: "x.txt"}, true},
		{`x\ `, ignoreRule{glob: `x\ `}, true},
		{"crlf\r", ignoreRule{glob: "crlf"}, true},
		{"/", ignoreRule{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, ok := parseIgnoreLine(tt.line)
			got.shape, got.lit = 0, "" // TestRuleShapesMatchWildmatch
			if ok != tt.ok || got != tt.want {
				t.Errorf("parseIgnoreLine(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// writeTree creates files (and their folders) under dir; a name ending in
// '/' is an empty folder.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ignoreFixture is a tree with root, nested and .git/info/exclude rules that
// exercise negation, directory-only, anchored, '**', classes and escapes.
var ignoreFixture = map[string]string{
	".gitignore": strings.Join([]string{
		"# comment",
		"*.log",
		"!keep.log",
		"build/",
		"/top-only.txt",
		"docs/**/*.tmp",
		"**/cache",
		"a/**/z.txt",
		"[Tt]emp*",
		"*.o",
		`trailing\ `,
		`\#hash`,
		`\!bang`,
		"node_modules",
		"dironly/",
		"foo/*",
		"!foo/bar",
		"spaces.txt   ",
	}, "\n") + "\n",
	"sub/.gitignore":           "!*.log\n*.txt\n!important.txt\n/local-only\nbuild\n",
	"sub/deeper/.gitignore":    "*.log\n",
	"x.log":                    "",
	"keep.log":                 "",
	"sub/x.log":                "",
	"sub/deeper/y.log":         "",
	"sub/deeper/keep.log":      "",
	"sub/a.txt":                "",
	"sub/important.txt":        "",
	"sub/local-only":           "",
	"sub/deeper/local-only":    "",
	"sub/build":                "", // a file named build: ignored by sub's "build", not by the root's "build/"
	"build/out.bin":            "",
	"lib/build/out.bin":        "",
	"top-only.txt":             "",
	"lib/top-only.txt":         "",
	"docs/a/b/x.tmp":           "",
	"docs/x.tmp":               "",
	"docs/x.md":                "",
	"cache/c.txt":              "",
	"lib/cache":                "",
	"a/z.txt":                  "",
	"a/q/r/z.txt":              "",
	"a/q/z.txt.bak":            "",
	"Temp1":                    "",
	"temp2/f":                  "",
	"tEmp3":                    "",
	"m.o":                      "",
	"trailing ":                "",
	"trailing":                 "",
	"#hash":                    "",
	"!bang":                    "",
	"node_modules/p/index.js":  "",
	"lib/node_modules/q.js":    "",
	"dironly":                  "",
	"lib/dironly/f":            "",
	"foo/bar":                  "",
	"foo/baz":                  "",
	"spaces.txt":               "",
	"excluded-by-info":         "",
	"lib/excluded-by-info":     "",
	"plain.go":                 "",
	"lib/plain.go":             "",
	"ünïcode/ß.txt":            "",
	"sub/deeper/important.txt": "",
}

// gitVisible lists the files git sees as untracked and not ignored under
// dir (relative to dir), the reference for the walk.
func gitVisible(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--others", "--exclude-standard")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	sort.Strings(files)
	return files
}

func initRepo(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for the .gitignore reference test")
	}
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte("excluded-by-info\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// walkFiles lists the non-directory entries Walk visits under root.
func walkFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := Walk(context.Background(), root, func(e Entry) error {
		if !e.IsDir {
			files = append(files, e.Rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// TestWalkMatchesGit checks the walk against git itself: the files it visits
// are exactly those `git ls-files --others --exclude-standard` lists, from
// the repository root and from sub-directories (where the .gitignore files
// above the search root must still apply).
func TestWalkMatchesGit(t *testing.T) {
	fixtures := []struct {
		name  string
		files map[string]string
		roots []string
	}{
		{"rules", ignoreFixture, []string{".", "sub", "sub/deeper", "lib", "docs"}},
		{"directories and re-inclusion", map[string]string{
			".gitignore": strings.Join([]string{
				"*/only-one-level",
				"deep/**/",
				"out/",
				"!out/keep",      // cannot re-include inside an ignored folder
				"logs/*",         // the folder's contents, not the folder
				"!logs/keep.log", // so this one comes back
				"a/b",            // anchored to the root
				"**/gen/*.go",
				"x?z",
				"u?c",
				"[0-9]*.tmp",
				"!9*.tmp",
			}, "\n") + "\n",
			"p/only-one-level":     "",
			"p/q/only-one-level":   "",
			"only-one-level":       "",
			"deep/f":               "",
			"deep/d/f":             "",
			"deep/d/e/f":           "",
			"out/keep":             "",
			"out/other":            "",
			"logs/a.log":           "",
			"logs/keep.log":        "",
			"a/b":                  "",
			"c/a/b":                "",
			"gen/x.go":             "",
			"m/gen/y.go":           "",
			"m/gen/y.txt":          "",
			"xyz":                  "",
			"ubc":                  "",
			"uéc":                  "",
			"x/z":                  "",
			"1.tmp":                "",
			"9.tmp":                "",
			"n/.gitignore":         "/local\n!x?z\nsub/**/f\n",
			"n/local":              "",
			"n/xyz":                "",
			"n/sub/f":              "",
			"n/sub/s/f":            "",
			"n/sub/g":              "",
			"n/.hidden/.gitignore": "*\n!.gitignore\n",
			"n/.hidden/anything":   "",
		}, []string{".", "n", "m", "deep"}},
	}
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			dir := t.TempDir()
			initRepo(t, dir)
			writeTree(t, dir, fx.files)
			for _, sub := range fx.roots {
				t.Run(sub, func(t *testing.T) {
					root := filepath.Join(dir, sub)
					want := gitVisible(t, root)
					got := walkFiles(t, root)
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("walk from %s:\n got  %q\n want %q (git)", sub, got, want)
					}
				})
			}
		})
	}
}

// shapePatterns and shapeNames exercise the simple rule shapes: every
// shape, patterns that only look like one (classes, escapes, '?', '**',
// stars inside), and names with the bytes those patterns treat specially.
var shapePatterns = []string{
	"*.log", "*", "**", "***", "*.", ".*", "build", "node_modules", "*~", "#*#", ".env*", "a*", "*a*", "*.min.js",
	"[ab].go", `\*.go`, `\#x`, "?.go", "a?c", "*.[ch]", "x*y", "**.go", "a**", "*\xff", "\xe2*", "*.go*",
}

var shapeNames = []string{
	"x.log", "log", ".log", "build", "Build", "builds", "node_modules", "a", "abc", "a.go", "b.go", "ab.go",
	"file~", "#tmp#", ".env", ".env.local", "x.min.js", "*.go", "#x", "x.c", "x.h", "xy", "xzy", "", ".", "\xff",
	"a\xff", "\xe2\x82", "*",
}

// TestRuleShapesMatchWildmatch: an unanchored rule read as a simple shape
// matches every name exactly as wildmatch does.
func TestRuleShapesMatchWildmatch(t *testing.T) {
	shaped := 0
	for _, p := range shapePatterns {
		r, ok := parseIgnoreLine(p)
		if !ok || r.anchored {
			continue
		}
		if r.shape != shapeGlob {
			shaped++
		}
		for _, n := range shapeNames {
			if got, want := r.matchName(n), wildmatch(r.glob, n); got != want {
				t.Errorf("rule %q (shape %d), name %q: %v, wildmatch %v", p, r.shape, n, got, want)
			}
		}
	}
	if shaped < 10 {
		t.Errorf("only %d patterns read as simple shapes", shaped)
	}
}

// FuzzRuleShapes: for any unanchored rule and any name without '/', the
// simple shape answers as wildmatch.
func FuzzRuleShapes(f *testing.F) {
	for _, p := range shapePatterns {
		f.Add(p, "x.log")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		r, ok := parseIgnoreLine(pattern)
		if !ok || r.anchored || strings.Contains(name, "/") {
			return
		}
		if got, want := r.matchName(name), wildmatch(r.glob, name); got != want {
			t.Errorf("rule %q (shape %d), name %q: %v, wildmatch %v", pattern, r.shape, name, got, want)
		}
	})
}

// FuzzWildmatch checks that odd patterns never panic and that a few laws
// hold: a pattern matches itself when it has no special characters, '*'
// matches any name without '/', and '**' matches anything.
func FuzzWildmatch(f *testing.F) {
	for _, s := range []string{"*.go", "a/**/b", "[!a-z]x", `\*`, "[[:alpha:]]", "[", "**"} {
		f.Add(s, "a/b.go")
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		_ = wildmatch(pattern, text)
		_, _ = parseIgnoreLine(pattern)
		if !strings.ContainsAny(text, `*?[\`) && !wildmatch(text, text) {
			t.Errorf("%q does not match itself", text)
		}
		if !strings.Contains(text, "/") && !wildmatch("*", text) {
			t.Errorf("* does not match %q", text)
		}
		if !wildmatch("**", text) {
			t.Errorf("** does not match %q", text)
		}
	})
}
