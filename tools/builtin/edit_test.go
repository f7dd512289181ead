package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/internal/fileutil"
	"github.com/pi-go/pi/runtime/tool"
)

func edits(pairs ...string) []map[string]string {
	var out []map[string]string
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]string{"oldText": pairs[i], "newText": pairs[i+1]})
	}
	return out
}

func TestEditErrors(t *testing.T) {
	const file = "one\ntwo\nthree\nfoo\nfoo\nfoo\n"
	tests := []struct {
		name string
		args any
		want string
	}{
		{"no edits", map[string]any{"path": "f.txt", "edits": []any{}},
			"Edit tool input is invalid. edits must contain at least one replacement."},
		{"missing file", map[string]any{"path": "nope.txt", "edits": edits("a", "b")},
			"Could not edit file: nope.txt. Error code: ENOENT."},
		{"read-only file", map[string]any{"path": "ro.txt", "edits": edits("one", "ONE")},
			"Could not edit file: ro.txt. Error code: EACCES."},
		{"directory", map[string]any{"path": "sub", "edits": edits("one", "ONE")},
			"Could not edit file: sub. Error code: EISDIR."},
		{"parent is a file", map[string]any{"path": "f.txt/x", "edits": edits("one", "ONE")},
			"Could not edit file: f.txt/x. Error code: ENOTDIR."},
		{"empty oldText", map[string]any{"path": "f.txt", "edits": edits("", "x")},
			"oldText must not be empty in f.txt."},
		{"empty oldText of several", map[string]any{"path": "f.txt", "edits": edits("one", "1", "", "x")},
			"edits[1].oldText must not be empty in f.txt."},
		{"not found", map[string]any{"path": "f.txt", "edits": edits("four", "4")},
			"Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."},
		{"not found of several", map[string]any{"path": "f.txt", "edits": edits("one", "1", "four", "4")},
			"Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines."},
		{"not unique", map[string]any{"path": "f.txt", "edits": edits("foo\n", "bar\n")},
			"Found 3 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."},
		{"overlapping occurrences count", map[string]any{"path": "f.txt", "edits": edits("foo\nfoo\n", "bar\n")},
			"Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."},
		{"not unique of several", map[string]any{"path": "f.txt", "edits": edits("one", "1", "foo", "bar")},
			"Found 3 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique."},
		{"overlap", map[string]any{"path": "f.txt", "edits": edits("two\nthree", "x", "one\ntwo", "y")},
			"edits[1] and edits[0] overlap in f.txt. Merge them into one edit or target disjoint regions."},
		{"nested", map[string]any{"path": "f.txt", "edits": edits("one\ntwo\nthree", "x", "two", "y")},
			"edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions."},
		{"no change", map[string]any{"path": "f.txt", "edits": edits("two", "two")},
			"No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."},
		{"no change of several", map[string]any{"path": "f.txt", "edits": edits("one", "one", "two", "two")},
			"No changes made to f.txt. The replacements produced identical content."},
		{"whitespace-only oldText not found", map[string]any{"path": "f.txt", "edits": edits("   ", "x")},
			"Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."},
		{"edits not an array", `{"path":"f.txt","edits":5}`,
			"Validation failed for tool \"edit\":\n  - edits: must be array (got number)\n\nReceived arguments:\n{\n  \"path\": \"f.txt\",\n  \"edits\": 5\n}"},
		{"newText missing", `{"path":"f.txt","edits":[{"oldText":"one"}]}`,
			"Validation failed for tool \"edit\":\n  - edits/0/newText: must have required property 'newText'"},
		{"newText null", `{"path":"f.txt","edits":[{"oldText":"one","newText":null}]}`,
			"Validation failed for tool \"edit\":\n  - edits/0/newText: must be string (got null)"},
		{"unknown edit field", `{"path":"f.txt","edits":[{"oldText":"one","newText":"1","all":true}]}`,
			"Validation failed for tool \"edit\":\n  - edits/0/all: is not an allowed property"},
		{"unknown top-level field", `{"path":"f.txt","edits":[{"oldText":"one","newText":"1"}],"dryRun":true}`,
			"Validation failed for tool \"edit\":\n  - dryRun: is not an allowed property"},
		{"path missing", `{"edits":[{"oldText":"one","newText":"1"}]}`,
			"Validation failed for tool \"edit\":\n  - path: must have required property 'path'"},
		{"edits string that is not JSON", `{"path":"f.txt","edits":"one -> 1"}`,
			"Validation failed for tool \"edit\":\n  - edits: must be array (got string)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "f.txt"), file)
			mustWrite(t, filepath.Join(dir, "ro.txt"), file)
			os.Chmod(filepath.Join(dir, "ro.txt"), 0o444)
			os.Mkdir(filepath.Join(dir, "sub"), 0o755)
			before := dirSnapshot(t, dir)
			r := callTool(t, dir, "edit", tt.args)
			if !r.IsError {
				t.Fatalf("no error: %q", r.Text())
			}
			if got := r.Text(); !strings.HasPrefix(got, tt.want) || (!strings.HasPrefix(tt.want, "Validation") && got != tt.want) {
				t.Errorf("error text:\n%q\nwant:\n%q", got, tt.want)
			}
			if after := dirSnapshot(t, dir); !mapsEqual(before, after) {
				t.Errorf("disk changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func TestEditSuccess(t *testing.T) {
	tests := []struct {
		name     string
		file     string // initial bytes of f.txt
		args     any
		want     string // bytes of f.txt afterwards
		tolerant bool
		blocks   int
	}{
		{"one line", "a\nb\nc\n", edits("b", "B"), "a\nB\nc\n", false, 1},
		{"several, matched in the original", "x = 1\ny = 2\nz = 3\n", edits("z = 3", "z = 30", "x = 1", "x = 10", "y", "yy"), "x = 10\nyy = 2\nz = 30\n", false, 3},
		{"newText may repeat oldText", "ab\n", edits("ab", "abab"), "abab\n", false, 1},
		{"delete", "keep\ndrop\nkeep too\n", edits("drop\n", ""), "keep\nkeep too\n", false, 1},
		{"CRLF file: matched with LF, written with CRLF", "a\r\nb\r\nc\r\n", edits("a\nb\n", "A\nB\nB2\n"), "A\r\nB\r\nB2\r\nc\r\n", false, 1},
		{"CRLF oldText against CRLF file", "a\r\nb\r\n", edits("a\r\nb", "x\r\ny"), "x\r\ny\r\n", false, 1},
		{"BOM kept", "\uFEFFhello\nworld\n", edits("hello", "HELLO"), "\uFEFFHELLO\nworld\n", false, 1},
		{"BOM and CRLF", "\uFEFFa\r\nb\r\n", edits("a\nb", "c\nd"), "\uFEFFc\r\nd\r\n", false, 1},
		{"mixed endings: other lines keep theirs", "a\r\nb\nc\r\nd\n", edits("c\nd", "C\nD"), "a\r\nb\nC\r\nD\n", false, 1},
		{"mixed endings: LF region gets LF", "a\r\nb\nc\nd\r\n", edits("b\nc", "B\nC"), "a\r\nB\nC\nd\r\n", false, 1},
		{"invalid UTF-8 elsewhere kept", "\xff\xfe bad\nfix me\n\xc3\x28 tail\n", edits("fix me", "fixed"), "\xff\xfe bad\nfixed\n\xc3\x28 tail\n", false, 1},
		{"Latin-1 file", "caf\xe9 = 1\nna\xefve = 2\n", edits("= 2", "= 3"), "caf\xe9 = 1\nna\xefve = 3\n", false, 1},
		{"tolerant: trailing whitespace, rest kept", "keep  \nfoo   \nbar\t\nkeep  \n", edits("foo\nbar\n", "baz\n"), "keep  \nbaz\nkeep  \n", true, 1},
		{"tolerant: smart quotes in the file", "say \u201chi\u201d and \u2018bye\u2019\nnext \u201cline\u201d\n", edits("say \"hi\"", "say \"hello\""), "say \"hello\" and \u2018bye\u2019\nnext \u201cline\u201d\n", true, 1},
		{"tolerant: dashes and spaces", "a\u2014b\u00a0c\nx\u2013y\n", edits("a-b c", "abc"), "abc\nx\u2013y\n", true, 1},
		{"tolerant: NFKC", "\ufb01le = 1\n\ufb01le2 = 2\n", edits("file = 1", "file = one"), "file = one\n\ufb01le2 = 2\n", true, 1},
		{"tolerant: decomposed accent in the file", "cafe\u0301 au lait\nend\n", edits("caf\u00e9 au", "coffee with"), "coffee with lait\nend\n", true, 1},
		{"tolerant: full-width letters", "\uff21\uff22\uff23 = 1\n", edits("ABC = 1", "abc = 2"), "abc = 2\n", true, 1},
		{"tolerant: match ends inside a line, rest of the line kept", "pre \u201cmid\u201d post  \n", edits("\"mid\"", "M"), "pre M post  \n", true, 1},
		{"tolerant: oldText's trailing space mid-line is replaced too", "say \u201chi\u201d   there\n", edits("say \"hi\" ", "X"), "X  there\n", true, 1},
		{"tolerant: oldText's whitespace-only first line is replaced too", "a\n\t\n  \uff21\nb\n", edits("\t\n  A", "N"), "a\nN\nb\n", true, 1},
		{"tolerant: widening never takes a line break", "\u201cq\u201d\nnext\n", edits("\"q\"   ", "Q"), "Q\nnext\n", true, 1},
		{"tolerant keeps trailing space after the match", "x \u201cq\u201d   \ny\n", edits("x \"q\"", "x 'q'"), "x 'q'   \ny\n", true, 1},
		{"tolerant region with CRLF", "a  \r\nb  \r\nc\r\n", edits("a\nb\n", "A\nB\n"), "A\r\nB\r\nc\r\n", true, 1},
		{"unique exact wins over ambiguous tolerant", "a \u201cx\u201d b\na \"x\" b\n", edits("a \"x\" b", "z"), "a \u201cx\u201d b\nz\n", false, 1},
		{"mixing exact and tolerant edits", "one \u201cq\u201d\ntwo\n", edits("two", "2", "one \"q\"", "1"), "1\n2\n", true, 2},
		{"no trailing newline", "last line", edits("line", "LINE"), "last LINE", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "f.txt"), tt.file)
			r := callTool(t, dir, "edit", map[string]any{"path": "f.txt", "edits": tt.args})
			want := fmt.Sprintf("Successfully replaced %d block(s) in f.txt.", tt.blocks)
			if tt.tolerant {
				want += "\n" + tolerantNote
			}
			if r.IsError || r.Text() != want {
				t.Fatalf("got %q (isError %v), want %q", r.Text(), r.IsError, want)
			}
			if got := mustRead(t, filepath.Join(dir, "f.txt")); got != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
			if _, ok := r.Details.(editDetails); !ok {
				t.Errorf("details = %#v", r.Details)
			}
			assertNoTemp(t, dir)
		})
	}
}

func TestEditDiffDetails(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	tests := []struct {
		name  string
		file  string
		edits []map[string]string
		diff  string // exact, or "golden:NAME"
		first int
	}{
		{"one line", "a\nb\nc\n", edits("b", "X"), " 1 a\n-2 b\n+2 X\n 3 c", 2},
		{"added line at the end", "a\nb", edits("b", "b\nc"), " 1 a\n-2 b\n+2 b\n+3 c", 2},
		{"CRLF shown without CR", "a\r\nb\r\n", edits("b", "B"), " 1 a\n-2 b\n+2 B", 2},
		{"context cut to 4 lines", b.String(), edits("line 20\n", "LINE 20\n"), "    ...\n 16 line 16\n 17 line 17\n 18 line 18\n 19 line 19\n-20 line 20\n+20 LINE 20\n 21 line 21\n 22 line 22\n 23 line 23\n 24 line 24\n    ...", 20},
		{"two far edits", b.String(), edits("line 3\n", "", "line 30\n", "line 30\nline 30b\n"), "golden:edit_diff_two_far_edits.txt", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "f.txt"), tt.file)
			r := callTool(t, dir, "edit", map[string]any{"path": "f.txt", "edits": tt.edits})
			d, ok := r.Details.(editDetails)
			if r.IsError || !ok {
				t.Fatalf("result %+v", r)
			}
			if d.FirstChangedLine != tt.first {
				t.Errorf("firstChangedLine = %d, want %d", d.FirstChangedLine, tt.first)
			}
			if name, ok := strings.CutPrefix(tt.diff, "golden:"); ok {
				golden(t, name, d.Diff)
			} else if d.Diff != tt.diff {
				t.Errorf("diff:\n%s\nwant:\n%s", d.Diff, tt.diff)
			}
			js, err := json.Marshal(r.Details)
			if err != nil || !strings.Contains(string(js), `"firstChangedLine":`) || !strings.Contains(string(js), `"diff":`) {
				t.Errorf("details JSON %s %v", js, err)
			}
		})
	}
}

func TestPrepareEditArguments(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // file afterwards; "" means the call must fail validation
	}{
		{"edits as a JSON string", `{"path":"f.txt","edits":"[{\"oldText\":\"a\",\"newText\":\"A\"}]"}`, "A\nb\n"},
		{"edits as a JSON string holding one object", `{"path":"f.txt","edits":"{\"oldText\":\"a\",\"newText\":\"A\"}"}`, "A\nb\n"},
		{"single edit object", `{"path":"f.txt","edits":{"oldText":"b","newText":"B"}}`, "a\nB\n"},
		{"legacy oldText/newText", `{"path":"f.txt","oldText":"a","newText":"A"}`, "A\nb\n"},
		{"legacy appended to edits", `{"path":"f.txt","edits":[{"oldText":"a","newText":"A"}],"oldText":"b","newText":"B"}`, "A\nB\n"},
		{"legacy with a non-string newText is left for validation", `{"path":"f.txt","oldText":"a","newText":5}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "f.txt"), "a\nb\n")
			r := callTool(t, dir, "edit", tt.in)
			if tt.want == "" {
				if !r.IsError || !strings.HasPrefix(r.Text(), "Validation failed for tool \"edit\":") {
					t.Errorf("got %q", r.Text())
				}
				return
			}
			if r.IsError {
				t.Fatalf("error: %s", r.Text())
			}
			if got := mustRead(t, filepath.Join(dir, "f.txt")); got != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
		})
	}
	// A shape it does not know passes through unchanged.
	for _, raw := range []string{`[1,2]`, `"x"`, `{"path":"f.txt","edits":[]}`} {
		out, err := prepareEditArguments(json.RawMessage(raw))
		if err != nil || string(out) != raw {
			t.Errorf("prepareEditArguments(%s) = %s, %v", raw, out, err)
		}
	}
}

func TestEditThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "real", "f.go"), "package a\n\nvar X = 1\n")
	if err := os.Symlink(filepath.Join("real", "f.go"), filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	r := callTool(t, dir, "edit", map[string]any{"path": "link.go", "edits": edits("X = 1", "X = 2")})
	if r.IsError {
		t.Fatal(r.Text())
	}
	if fi, err := os.Lstat(filepath.Join(dir, "link.go")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.go is no longer a symlink")
	}
	if got := mustRead(t, filepath.Join(dir, "real", "f.go")); got != "package a\n\nvar X = 2\n" {
		t.Errorf("target = %q", got)
	}
}

// TestEditConcurrent runs 50 edits of different lines of one file at once
// through the registry and the call pipeline, reaching the file under
// three names: none may be lost.
func TestEditConcurrent(t *testing.T) {
	dir := t.TempDir()
	const n = 50
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "value %02d = old\n", i)
	}
	path := filepath.Join(dir, "f.txt")
	mustWrite(t, path, b.String())
	if err := os.Symlink("f.txt", filepath.Join(dir, "alias.txt")); err != nil {
		t.Fatal(err)
	}
	names := []string{"f.txt", "alias.txt", path}
	tools := fileTools(t, dir)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args, _ := json.Marshal(map[string]any{"path": names[i%3], "edits": edits(fmt.Sprintf("value %02d = old", i), fmt.Sprintf("value %02d = new", i))})
			r := tool.Run(context.Background(), tools, nil, "edit", fmt.Sprint("call-", i), args, nil)
			if r.IsError {
				t.Errorf("edit %d: %s", i, r.Text())
			}
		}()
	}
	wg.Wait()
	got := mustRead(t, path)
	if want := strings.ReplaceAll(b.String(), "= old", "= new"); got != want {
		t.Errorf("edits lost:\n%s", got)
	}
	if n := fileutil.LockedFiles(); n != 0 {
		t.Errorf("%d lock entries left", n)
	}
}

// TestDiffLinesBeyondSearchBound: texts further apart than the search bound
// come out as everything removed, then everything added, after the common
// head.
func TestDiffLinesBeyondSearchBound(t *testing.T) {
	var a, b strings.Builder
	a.WriteString("same\n")
	b.WriteString("same\n")
	for i := range myersMaxD {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	parts := diffLines(a.String(), b.String())
	if len(parts) != 3 || parts[0].op != ' ' || len(parts[0].lines) != 1 ||
		parts[1].op != '-' || len(parts[1].lines) != myersMaxD || parts[2].op != '+' || len(parts[2].lines) != myersMaxD {
		var shape []string
		for _, p := range parts {
			shape = append(shape, fmt.Sprintf("%c%d", p.op, len(p.lines)))
		}
		t.Errorf("parts %v", shape)
	}
}

func TestTolerantTrimSet(t *testing.T) {
	// JavaScript's trimEnd removes exactly these of the candidates.
	for _, r := range "\t\n\v\f\r \u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff" {
		if !isTrimSpace(r) {
			t.Errorf("U+%04X should be trimmed", r)
		}
	}
	for _, r := range "\u0085\u180e\u200bx-" {
		if isTrimSpace(r) {
			t.Errorf("U+%04X should be kept", r)
		}
	}
}

// TestDiffAbbreviatedHead: the common head kept as its first and last
// lines renders exactly as the head split into every line, for heads of
// every length around the context size, with and without a final newline
// and with repeated lines at the change.
func TestDiffAbbreviatedHead(t *testing.T) {
	for headLen := 0; headLen <= 3*diffContextLines+2; headLen++ {
		for _, tail := range []string{"", "t\n", "t", "x\nx\n"} {
			for _, change := range [][2]string{{"a\n", "b\n"}, {"a\n", ""}, {"", "b\n"}, {"x\n", "x\nx\n"}, {"a", "b"}} {
				var head strings.Builder
				for i := range headLen {
					fmt.Fprintf(&head, "line %d\n", i%3)
				}
				a, b := head.String()+change[0]+tail, head.String()+change[1]+tail
				want, wantFirst := renderDiff(a, []string{b}, diffLinesWith(a, b, false))
				got, first := generateDiff(a, b)
				if got != want || first != wantFirst {
					t.Fatalf("head %d, tail %q, change %q:\ngot\n%s (%d)\nwant\n%s (%d)", headLen, tail, change, got, first, want, wantFirst)
				}
			}
		}
	}
}
