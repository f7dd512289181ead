package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/runtime/tool"
)

// searchTools wraps grep, find and ls the way the loop does.
func searchTools(t testing.TB, cwd string) []tool.AgentTool {
	t.Helper()
	reg := tool.NewRegistry()
	for _, d := range []tool.ToolDefinition{grepDefinition(), findDefinition(), lsDefinition()} {
		if err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	tools, err := reg.ActiveTools(func(string) tool.Context { return tool.Context{Cwd: cwd} })
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// callSearch runs one call of grep, find or ls through the whole pipeline
// (prepare, validate, execute).
func callSearch(ctx context.Context, t testing.TB, cwd, name, args string) tool.Result {
	t.Helper()
	return tool.Run(ctx, searchTools(t, cwd), nil, name, "call-1", json.RawMessage(args), nil)
}

// grepFixture is a small project: sources, an ignored folder and log, a
// .git folder, a binary file, CRLF text and a hidden folder.
var grepFixture = map[string]string{
	".gitignore":     "ignored/\n*.log\n",
	"src/main.go":    "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
	"src/util.go":    "package main\n\n// Hello helper\nfunc hello() string { return \"hello\" }\n",
	"src/util_test":  "no match here\n",
	"README.md":      "# Demo\nSay hello.\n",
	"notes/todo.txt": "one\ntwo\nhello three\nfour\nfive\nhello six\nseven\n",
	"ignored/x.go":   "hello from an ignored folder\n",
	"debug.log":      "hello from a log\n",
	".git/HEAD":      "hello from git\n",
	"bin.dat":        "hello\x00binary\n",
	"crlf.txt":       "hello\r\nworld\r\n",
	".hidden/h.txt":  "hello hidden\n",
	"no-newline.txt": "last hello",
}

func TestGrep(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, grepFixture)
	long := strings.Repeat("x", 600) + " hello"
	writeTree(t, dir, map[string]string{"long/l.txt": long + "\nshort hello\n"})
	abs := func(p string) string { return filepath.Join(dir, p) }
	tests := []struct {
		name    string
		args    string
		want    string
		isError bool
	}{
		{"plain, .gitignore honoured, .git and binary skipped", `{"pattern":"hello","path":"."}`, strings.Join([]string{
			".hidden/h.txt:1: hello hidden",
			"README.md:2: Say hello.",
			"crlf.txt:1: hello",
			"long/l.txt:1: " + strings.Repeat("x", 500) + "... [truncated]",
			"long/l.txt:2: short hello",
			"no-newline.txt:1: last hello",
			"notes/todo.txt:3: hello three",
			"notes/todo.txt:6: hello six",
			"src/main.go:4: \tprintln(\"hello\")",
			`src/util.go:4: func hello() string { return "hello" }`,
		}, "\n") + "\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]", false},
		{"default path is the working directory", `{"pattern":"Say"}`, "README.md:2: Say hello.", false},
		{"ignoreCase", `{"pattern":"HELLO H","ignoreCase":true,"path":"src"}`, "util.go:3: // Hello helper", false},
		{"regex", `{"pattern":"^func \\w+\\(","path":"src"}`, "main.go:3: func main() {\nutil.go:4: func hello() string { return \"hello\" }", false},
		{"literal", `{"pattern":"(\"hello\")","literal":true}`, "src/main.go:4: \tprintln(\"hello\")", false},
		{"regex metacharacters without literal", `{"pattern":"hello.","path":"notes"}`, "todo.txt:3: hello three\ntodo.txt:6: hello six", false},
		{"glob on names", `{"pattern":"hello","glob":"*.go"}`, "src/main.go:4: \tprintln(\"hello\")\nsrc/util.go:4: func hello() string { return \"hello\" }", false},
		{"glob with **", `{"pattern":"hello","glob":"**/*.txt","path":"notes"}`, "todo.txt:3: hello three\ntodo.txt:6: hello six", false},
		{"glob with a slash is anchored at the search path", `{"pattern":"hello","glob":"src/*.go"}`, "src/main.go:4: \tprintln(\"hello\")\nsrc/util.go:4: func hello() string { return \"hello\" }", false},
		{"glob with braces", `{"pattern":"hello","glob":"*.{md,txt}","path":"notes"}`, "todo.txt:3: hello three\ntodo.txt:6: hello six", false},
		{"negated glob excludes", `{"pattern":"hello","glob":"!{src,long,.hidden}","path":"."}`, "README.md:2: Say hello.\ncrlf.txt:1: hello\nno-newline.txt:1: last hello\nnotes/todo.txt:3: hello three\nnotes/todo.txt:6: hello six", false},
		{"negated directory-only glob excludes those folders only (as rg --glob)", `{"pattern":"hello","glob":"!{src,long,.hidden}/","path":"."}`, "README.md:2: Say hello.\ncrlf.txt:1: hello\nno-newline.txt:1: last hello\nnotes/todo.txt:3: hello three\nnotes/todo.txt:6: hello six", false},
		{"directory-only glob matches no file (as rg --glob)", `{"pattern":"hello","glob":"notes/"}`, "No matches found", false},
		{"single file shows its name", `{"pattern":"six","path":"notes/todo.txt"}`, "todo.txt:6: hello six", false},
		{"explicit ignored folder is searched", `{"pattern":"hello","path":"ignored"}`, "x.go:1: hello from an ignored folder", false},
		{"absolute path", fmt.Sprintf(`{"pattern":"three","path":%q}`, abs("notes")), "todo.txt:3: hello three", false},
		{"context", `{"pattern":"hello","path":"notes/todo.txt","context":1}`, strings.Join([]string{
			"todo.txt-2- two", "todo.txt:3: hello three", "todo.txt-4- four",
			"todo.txt-5- five", "todo.txt:6: hello six", "todo.txt-7- seven",
		}, "\n"), false},
		{"overlapping context repeats lines, one block per match", `{"pattern":"hello","path":"notes/todo.txt","context":2}`, strings.Join([]string{
			"todo.txt-1- one", "todo.txt-2- two", "todo.txt:3: hello three", "todo.txt-4- four", "todo.txt-5- five",
			"todo.txt-4- four", "todo.txt-5- five", "todo.txt:6: hello six", "todo.txt-7- seven",
		}, "\n"), false},
		{"context at the end of a file without a phantom line", `{"pattern":"seven","path":"notes/todo.txt","context":3}`,
			"todo.txt-4- four\ntodo.txt-5- five\ntodo.txt-6- hello six\ntodo.txt:7: seven", false},
		{"huge context is the whole file, cheaply", `{"pattern":"hello","path":"notes/todo.txt","context":1e12}`, strings.Join([]string{
			"todo.txt-1- one", "todo.txt-2- two", "todo.txt:3: hello three", "todo.txt-4- four", "todo.txt-5- five", "todo.txt-6- hello six", "todo.txt-7- seven",
			"todo.txt-1- one", "todo.txt-2- two", "todo.txt-3- hello three", "todo.txt-4- four", "todo.txt-5- five", "todo.txt:6: hello six", "todo.txt-7- seven",
		}, "\n"), false},
		{"CRLF removed", `{"pattern":"world$","path":"crlf.txt","context":1}`, "crlf.txt-1- hello\ncrlf.txt:2: world", false},
		{"limit reached", `{"pattern":"hello","path":"src","limit":1}`, "main.go:4: \tprintln(\"hello\")\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]", false},
		{"limit with context keeps the last block whole", `{"pattern":"hello","path":"notes","limit":1,"context":1}`,
			"todo.txt-2- two\ntodo.txt:3: hello three\ntodo.txt-4- four\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]", false},
		{"limit equal to the match count has no notice", `{"pattern":"hello","path":"notes","limit":2}`, "todo.txt:3: hello three\ntodo.txt:6: hello six", false},
		{"limit below 1 is 1", `{"pattern":"hello","path":"notes","limit":0}`, "todo.txt:3: hello three\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]", false},
		{"no matches", `{"pattern":"zebra"}`, "No matches found", false},
		{"binary file named explicitly", `{"pattern":"hello","path":"bin.dat"}`, "No matches found", false},
		{"path not found", `{"pattern":"x","path":"nope"}`, "Path not found: " + abs("nope"), true},
		{"bad regex names the field", `{"pattern":"(unclosed"}`, "invalid pattern: error parsing regexp: missing closing ): `(unclosed` (set literal to true to search for the text as it is)", true},
		{"bad glob names the field", `{"pattern":"x","glob":"[a"}`, `invalid glob "[a": not a valid glob pattern`, true},
		{"missing pattern", `{}`, "Validation failed for tool \"grep\":\n  - pattern: must have required property 'pattern'\n\nReceived arguments:\n{}", true},
		{"wrong type", `{"pattern":"x","context":"2"}`, "Validation failed for tool \"grep\":\n  - context: must be number (got string)", true},
		{"unknown field", `{"pattern":"x","recursive":true}`, `grep: decode arguments: json: unknown field "recursive"`, true},
	}
	for _, mode := range grepModes {
		t.Run(mode.name, func(t *testing.T) {
			defer setWholeFileMax(mode.max)()
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					r := callSearch(context.Background(), t, dir, "grep", tt.args)
					got := r.Text()
					if tt.name == "wrong type" {
						got, _, _ = strings.Cut(got, "\n\nReceived")
					}
					if got != tt.want || r.IsError != tt.isError {
						t.Errorf("grep %s\n got (isError=%v):\n%s\nwant (isError=%v):\n%s", tt.args, r.IsError, got, tt.isError, tt.want)
					}
				})
			}
		})
	}
}

// grepModes run a test with files read whole (the usual case) and line by
// line (the path for files over grepWholeFileMax), from the start or after
// the first bytes were read whole.
var grepModes = []struct {
	name string
	max  int64
}{{"whole", grepWholeFileMax}, {"stream", -1}, {"stream-after-7-bytes", 7}}

func setWholeFileMax(n int64) (restore func()) {
	old := grepWholeFileMax
	grepWholeFileMax = n
	return func() { grepWholeFileMax = old }
}

func TestRequiredNeedle(t *testing.T) {
	tests := []struct {
		expr string
		want string // "" for none; "~" in front for a case-folded needle
	}{
		{"needle", "needle"},
		{"(?i)NeeDle", "~needle"},
		{`func \w+Handler\(`, "Handler("},
		{`(?i)nee+dle:`, "~dle:"}, // the longest literal of the sequence
		{`(foo)+bar`, "foo"},
		{`(?:ab){2,}`, "ab"},
		{`a.b`, ""},   // one-byte literals are not used
		{`x*yz?`, ""}, // nothing required is two bytes long
		{`foo|bar`, ""},
		{"(?i)Kelvin", "~elvin"},              // K folds to U+212A too
		{"(?i)sun", "~un"},                    // s folds to U+017F too
		{"(?i)closewitherror", "~ewitherror"}, // the longest run without k or s
		{"(?i)ks", ""},
		{"(?i)café au lait", "~ au lait"}, // not ASCII
		{"café", "café"},                  // exact needles may be any UTF-8
		{"(?i)a(?-i)BC", "BC"},
		{"tab\there", "tab\there"},
		{"(", ""},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got := ""
			if n := requiredNeedle(tt.expr); n != nil {
				got = string(n.text)
				if n.fold {
					got = "~" + got
				}
			}
			if got != tt.want {
				t.Errorf("requiredNeedle(%q) = %q, want %q", tt.expr, got, tt.want)
			}
		})
	}
}

// TestGrepWholeMatchesStream checks that finding candidate lines in a whole
// file gives the same output as checking line by line, for anchors, word
// boundaries, flags, empty matches, CRLF text and context.
func TestGrepWholeMatchesStream(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"lf.txt":   "alpha beta\n\nbeta alpha\n  gamma\nalphabet\nALPHA Beta\n\u212aelvin only\n\u017fun only\nKelvin\nend without newline alpha",
		"crlf.txt": "alpha beta\r\nbeta alpha\r\n\r\ngamma\r\n",
		"one.txt":  "alpha",
		"empty":    "",
	})
	patterns := []string{"alpha", "^alpha", "alpha$", `\balpha\b`, `\Balpha`, `\Aalpha`, `alpha\z`, "(?-m)^beta", "(?s)a.b", `(?:al|ga)\w+`,
		"^$", "", "a*", `beta\s+alpha`, "kelvin", "SUN", "Alpha Beta", "a.b", `\w+pha`, "(?i)al+PHA", "Be(ta)+", `(?i)ALPHA\s+beta`, `beta\r`, "ha\nbe", `\n`, "(?i)ALPHA", "ALPHA", `[^a]$`, "^.{0,3}$", "^(?:  )?gamma"}
	for _, p := range patterns {
		for _, extra := range []string{``, `,"context":1`, `,"context":3`, `,"limit":2`, `,"ignoreCase":true`} {
			args := fmt.Sprintf(`{"pattern":%q%s}`, p, extra)
			t.Run(args, func(t *testing.T) {
				got := make([]tool.Result, len(grepModes))
				for i, mode := range grepModes {
					restore := setWholeFileMax(mode.max)
					got[i] = callSearch(context.Background(), t, dir, "grep", args)
					restore()
				}
				for i := 1; i < len(got); i++ {
					if got[0].Text() != got[i].Text() || got[0].IsError != got[i].IsError {
						t.Errorf("whole file:\n%s\n%s:\n%s", got[0].Text(), grepModes[i].name, got[i].Text())
					}
				}
			})
		}
	}
}

func TestGrepDetails(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "hit\nhit\n" + strings.Repeat("y", 501) + "hit\n"})
	tests := []struct {
		args string
		want string
	}{
		{`{"pattern":"hit"}`, `{"linesTruncated":true}`},
		{`{"pattern":"hit","limit":1}`, `{"matchLimitReached":1}`},
		{`{"pattern":"^hit$"}`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			r := callSearch(context.Background(), t, dir, "grep", tt.args)
			got, err := json.Marshal(r.Details)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("details %s, want %s", got, tt.want)
			}
		})
	}
}

// TestGrepByteLimit checks the 50KB cut: whole lines only, the notice, both
// notices together, and that the kept text is the start of the full output.
func TestGrepByteLimit(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "hello %04d %s\n", i, strings.Repeat("z", 80))
	}
	writeTree(t, dir, map[string]string{"big.txt": b.String()})
	line := func(i int) string { return fmt.Sprintf("big.txt:%d: hello %04d %s", i+1, i, strings.Repeat("z", 80)) }
	// The most whole lines that fit in 51200 bytes, newlines between them.
	var want []string
	size := -1
	for i := 0; ; i++ {
		if size+1+len(line(i)) > output.DefaultMaxBytes {
			break
		}
		size += 1 + len(line(i))
		want = append(want, line(i))
	}
	body := strings.Join(want, "\n")
	tests := []struct {
		args, notice string
		total        int // lines of the whole output
	}{
		{`{"pattern":"hello","limit":5000}`, "[50.0KB limit reached]", 3000},
		{`{"pattern":"hello","limit":2000}`, "[2000 matches limit reached. Use limit=4000 for more, or refine pattern. 50.0KB limit reached]", 2000},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			r := callSearch(context.Background(), t, dir, "grep", tt.args)
			if r.IsError {
				t.Fatal(r.Text())
			}
			if got := r.Text(); got != body+"\n\n"+tt.notice {
				t.Errorf("got %d bytes ending %q; want %d bytes ending %q", len(got), got[max(0, len(got)-200):], len(body), tt.notice)
			}
			var all []string
			for i := range tt.total {
				all = append(all, line(i))
			}
			d, ok := r.Details.(grepDetails)
			if !ok || d.Truncation == nil {
				t.Fatalf("details %#v", r.Details)
			}
			tr := d.Truncation
			if tr.TotalLines != tt.total || tr.TotalBytes != len(strings.Join(all, "\n")) || tr.OutputLines != len(want) || tr.OutputBytes != len(body) || tr.TruncatedBy != "bytes" {
				t.Errorf("truncation %+v; want %d lines, %d bytes in, %d lines, %d bytes out", *tr, tt.total, len(strings.Join(all, "\n")), len(want), len(body))
			}
		})
	}
}

func TestGrepBinaryLaterInFile(t *testing.T) {
	dir := t.TempDir()
	// A NUL byte past the first 64KB ends the search of that file; matches
	// before it stay.
	content := "hello first\n" + strings.Repeat("filler line\n", 7000) + "hello \x00 binary\nhello after\n"
	writeTree(t, dir, map[string]string{"late.bin": content})
	r := callSearch(context.Background(), t, dir, "grep", `{"pattern":"hello"}`)
	if got, want := r.Text(), "late.bin:1: hello first"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestGrepCancel(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/f%d.txt", i%10, i)] = "nothing to see\n"
	}
	writeTree(t, dir, files)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, name := range []string{"grep", "find", "ls"} {
		t.Run(name, func(t *testing.T) {
			r := callSearch(ctx, t, dir, name, `{"pattern":"zebra"}`)
			if name == "ls" {
				r = callSearch(ctx, t, dir, name, `{}`)
			}
			if !r.IsError || r.Text() != "Operation aborted" {
				t.Errorf("got isError=%v %q", r.IsError, r.Text())
			}
		})
	}
	// Cancelled while the walk runs: grep and find stop part way.
	for _, name := range []string{"grep", "find"} {
		t.Run(name+" mid-walk", func(t *testing.T) {
			ctx := &countdownCtx{Context: context.Background()}
			ctx.n.Store(5)
			var err error
			if name == "grep" {
				_, err = runGrep(ctx, tool.Context{Cwd: dir}, grepArgs{Pattern: "zebra"})
			} else {
				_, err = runFind(ctx, tool.Context{Cwd: dir}, findArgs{Pattern: "*.txt"})
			}
			if err == nil || err.Error() != "Operation aborted" {
				t.Errorf("err = %v", err)
			}
		})
	}
}

func TestGrepDefinitionTexts(t *testing.T) {
	d := grepDefinition()
	if d.Name != "grep" || d.Label != "grep" || d.Source.Kind != tool.SourceBuiltin || d.ExecutionMode != tool.Parallel {
		t.Errorf("definition: %+v", d)
	}
	want := "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). Long lines are truncated to 500 chars."
	if d.Description != want {
		t.Errorf("description %q", d.Description)
	}
	if d.PromptSnippet != "Search file contents for patterns (respects .gitignore)" {
		t.Errorf("snippet %q", d.PromptSnippet)
	}
	assertSchema(t, d.Parameters, `{"type":"object","required":["pattern"],"properties":{`+
		`"pattern":{"type":"string","description":"Search pattern (regex or literal string)"},`+
		`"path":{"type":"string","description":"Directory or file to search (default: current directory)"},`+
		`"glob":{"type":"string","description":"Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"},`+
		`"ignoreCase":{"type":"boolean","description":"Case-insensitive search (default: false)"},`+
		`"literal":{"type":"boolean","description":"Treat pattern as literal string instead of regex (default: false)"},`+
		`"context":{"type":"number","description":"Number of lines to show before and after each match (default: 0)"},`+
		`"limit":{"type":"number","description":"Maximum number of matches to return (default: 100)"}}}`)
}

// assertSchema compares a schema with the reference's JSON, key order
// included.
func assertSchema(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, got); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("schema\n got  %s\n want %s", b.String(), want)
	}
}

// countdownCtx is a context whose Err turns to context.Canceled after n
// calls: a cancellation that lands in the middle of a walk, deterministically.
type countdownCtx struct {
	context.Context
	n atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestSearchGolden pins longer outputs of grep and find over a small project
// (checked by hand when the golden files were made; -update rewrites them).
func TestSearchGolden(t *testing.T) {
	dir := t.TempDir()
	var main strings.Builder
	main.WriteString("package main\n\nimport \"fmt\"\n\n// TODO: flags\nfunc main() {\n\t// TODO: config\n\tfmt.Println(\"hi\")\n")
	for i := 9; i <= 27; i++ {
		fmt.Fprintf(&main, "\t_ = %d\n", i)
	}
	main.WriteString("\t// FIXME: exit code\n}\n")
	writeTree(t, dir, map[string]string{
		".gitignore":                   "*.gen.go\n/tmp/\n",
		"cmd/app/main.go":              main.String(),
		"internal/store/store.go":      "package store\n\n// Store keeps things.\ntype Store struct{} // TODO: fields\n",
		"internal/store/store_test.go": "package store\n",
		"internal/store/zz.gen.go":     "// TODO: generated, ignored\n",
		"docs/notes.md":                "# Notes\n\n- TODO: write the guide\n",
		"tmp/scratch.txt":              "TODO: ignored\n",
		"Makefile":                     "all:\n\tgo build ./... # FIXME: flags\n",
	})
	tests := []struct{ golden, tool, args string }{
		{"grep_context.txt", "grep", `{"pattern":"TODO|FIXME","context":2}`},
		{"find_all.txt", "find", `{"pattern":"**"}`},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			r := callSearch(context.Background(), t, dir, tt.tool, tt.args)
			if r.IsError {
				t.Fatal(r.Text())
			}
			golden(t, tt.golden, r.Text())
		})
	}
}

// FuzzRequiredNeedle checks the property grep's fast path rests on: every
// line a pattern matches contains the pattern's required needle (in the
// ASCII-lower-cased line when the needle is case-folded).
func FuzzRequiredNeedle(f *testing.F) {
	for _, seed := range [][2]string{
		{"needle", "a needle here"}, {"(?i)NeEdLe", "NEEDLE"}, {`func \w+Handler\(`, "func xHandler("},
		{"(?i)nee+dle:", "NEEEDLE:"}, {"(ab){2,}c", "ababc"}, {"(?i)a(?-i)BC", "aBC"}, {"x|yz", "yz"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, line string) {
		re, err := regexp.Compile(pattern)
		if err != nil || strings.Contains(line, "\n") {
			return
		}
		n := requiredNeedle(pattern)
		if n == nil || !re.MatchString(line) {
			return
		}
		hay := []byte(line)
		if n.fold {
			hay = lowerASCIIBytes(hay)
			// The fold finder finds the needle where the lower-cased
			// line has it, at every start.
			for from := 0; from <= len(line); from++ {
				want := bytes.Index(hay[from:], n.text)
				if want >= 0 {
					want += from
				}
				if got := newFoldFinder(n, []byte(line)).index(from); got != want {
					t.Fatalf("fold needle %q in %q from %d: %d, want %d", n.text, line, from, got, want)
				}
			}
		}
		if !bytes.Contains(hay, n.text) {
			t.Errorf("%q matches %q but the needle %q (fold %v) is not in it", pattern, line, n.text, n.fold)
		}
		if got, want := n.index(hay), bytes.Index(hay, n.text); got != want {
			t.Errorf("needle %q in %q: index %d, bytes.Index %d", n.text, hay, got, want)
		}
	})
}

func lowerASCIIBytes(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// TestFoldFinderOneScan: a folded needle over text with many lower-case
// occurrences and the upper-case form of its scanned byte only at the end
// is found at every occurrence, in order, from each last one.
func TestFoldFinderOneScan(t *testing.T) {
	n := requiredNeedle("(?i)ewitherror")
	if n == nil || !n.fold {
		t.Fatal("no folded needle")
	}
	var b strings.Builder
	var want []int
	for i := range 2000 {
		if i%3 == 0 {
			want = append(want, b.Len()+2)
			b.WriteString("x EwItHeRrOr y\n")
		} else {
			b.WriteString("some other line with w and W\n")
		}
	}
	want = append(want, b.Len())
	b.WriteString("EWITHERROR")
	f := newFoldFinder(n, []byte(b.String()))
	var got []int
	for at := f.index(0); at >= 0; at = f.index(at + 1) {
		got = append(got, at)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("found %d at %v…, want %d at %v…", len(got), got[:min(5, len(got))], len(want), want[:5])
	}
}
