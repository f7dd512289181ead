package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

// FuzzEditApply checks, for one edit of arbitrary bytes: the tool leaves the
// file byte-for-byte unchanged on error; on success only the matched region
// changed, the region is the oldText (exactly, in the LF view) or holds its
// tolerant form, and an exact match was unique.
func FuzzEditApply(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), "b", "B")
	f.Add([]byte("a\r\nb\r\nc\r\n"), "a\nb", "x\ny\nz")
	f.Add([]byte("\xef\xbb\xbfhello\r\nworld"), "hello", "bye")
	f.Add([]byte("say \xe2\x80\x9chi\xe2\x80\x9d  \nnext"), "say \"hi\"\nnext", "x")
	f.Add([]byte("foo\nfoo\nfoo\n"), "foo\nfoo\n", "bar")
	f.Add([]byte("\xff\xfe\nfix\n\xc3("), "fix", "ok")
	f.Add([]byte("\xef\xac\x81le \xe2\x80\x94 x\t \n"), "file - x", "y")
	f.Add([]byte("caf\xe9\r\nna\xefve\n"), "na", "NA")
	dir := f.TempDir()
	tools := fileTools(f, dir)
	path := filepath.Join(dir, "f.txt")
	f.Fuzz(func(t *testing.T, orig []byte, oldText, newText string) {
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		// JSON carries only valid UTF-8: compare with what the tool receives.
		oldText, newText = jsonRoundTrip(oldText), jsonRoundTrip(newText)
		args, _ := json.Marshal(map[string]any{"path": "f.txt", "edits": []editSpec{{oldText, newText}}})
		r := tool.Run(context.Background(), tools, nil, "edit", "fuzz", args, nil)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res, applyErr := applyEdits(string(orig), []editSpec{{oldText, newText}}, "f.txt")
		if r.IsError {
			if !bytes.Equal(got, orig) {
				t.Fatalf("error %q but the file changed", r.Text())
			}
			if applyErr == nil {
				t.Fatalf("tool failed (%s) where applyEdits did not", r.Text())
			}
			return
		}
		if applyErr != nil {
			t.Fatalf("tool succeeded where applyEdits failed: %v", applyErr)
		}
		if string(got) != strings.Join(res.out, "") {
			t.Fatalf("file is not what applyEdits computed")
		}
		checkEditInvariants(t, orig, oldText, res)
	})
}

func checkEditInvariants(t *testing.T, origBytes []byte, oldText string, res applyEditsResult) {
	orig := string(origBytes)
	t.Helper()
	if len(res.regions) != 1 {
		t.Fatalf("%d regions", len(res.regions))
	}
	rg := res.regions[0]
	if rg.start < 0 || rg.end < rg.start || rg.end > len(orig) {
		t.Fatalf("region [%d,%d) outside the file of %d bytes", rg.start, rg.end, len(orig))
	}
	tail := len(orig) - rg.end
	out := strings.Join(res.out, "")
	if got, want := strings.Join(res.after, ""), newLFView(out).text; got != want {
		t.Fatalf("LF view of the pieces %q, of the joined result %q", got, want)
	}
	if out[:rg.start] != orig[:rg.start] || out[len(out)-tail:] != orig[rg.end:] {
		t.Fatalf("bytes outside the matched region [%d,%d) changed", rg.start, rg.end)
	}
	bom := 0
	if strings.HasPrefix(orig, utf8BOM) {
		bom = 3
		if rg.start < bom {
			t.Fatalf("region [%d,%d) covers the BOM", rg.start, rg.end)
		}
	}
	region := newLFView(orig[rg.start:rg.end]).text
	old := strings.ReplaceAll(oldText, "\r\n", "\n")
	view := newLFView(orig).text
	if !rg.tolerant {
		if region != old {
			t.Fatalf("exact region %q is not oldText %q", region, old)
		}
		if _, n := findUnique(view, old); n != 1 {
			t.Fatalf("exact match used but oldText occurs %d times", n)
		}
		return
	}
	if _, n := findUnique(view, old); n != 0 {
		t.Fatalf("tolerant match used though oldText occurs exactly %d times", n)
	}
	if key := tolerantNormalize(old); !strings.Contains(tolerantNormalize(region), key) {
		t.Fatalf("tolerant region %q (%q) does not hold %q", region, tolerantNormalize(region), key)
	}
}

// FuzzEditMany checks several edits of one file the same way: on success
// the regions are disjoint and every byte outside them is unchanged.
func FuzzEditMany(f *testing.F) {
	f.Add([]byte("x = 1\ny = 2\nz = 3\n"), "x = 1", "X", "z", "Z")
	f.Add([]byte("a\r\nb\r\nc"), "a\nb", "ab", "c", "C\nD")
	f.Add([]byte("aaa"), "aa", "b", "a", "c")
	f.Fuzz(func(t *testing.T, orig []byte, o1, n1, o2, n2 string) {
		res, err := applyEdits(string(orig), []editSpec{{o1, n1}, {o2, n2}}, "f")
		if err != nil {
			return
		}
		prev := 0
		for _, rg := range res.regions {
			if rg.start < prev || rg.end < rg.start || rg.end > len(orig) {
				t.Fatalf("regions overlap or are out of order: %+v", res.regions)
			}
			prev = rg.end
		}
		first, last := res.regions[0], res.regions[len(res.regions)-1]
		out := strings.Join(res.out, "")
		if out[:first.start] != string(orig[:first.start]) || !strings.HasSuffix(out, string(orig[last.end:])) {
			t.Fatalf("bytes outside the regions changed")
		}
		if got, want := strings.Join(res.after, ""), newLFView(out).text; got != want {
			t.Fatalf("LF view of the pieces %q, of the joined result %q", got, want)
		}
		if out == string(orig) {
			t.Fatalf("success without a change")
		}
	})
}

func jsonRoundTrip(s string) string {
	b, _ := json.Marshal(s)
	var out string
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// FuzzDiffLines checks the line diff behind the edit details: the equal and
// removed parts rebuild the old text, the equal and added parts the new one.
func FuzzDiffLines(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nX\nc\n")
	f.Add("a\nb", "a\nb\nc")
	f.Add("x\nx\n", "x\nx\nx\n")
	f.Add("", "new\n")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nx\n11\n", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\ny\n11\n")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\nx", "1\n2\n3\n4\n5\n6\n7\n8\n9\ny")
	f.Fuzz(func(t *testing.T, a, b string) {
		var oldB, newB strings.Builder
		full := diffLinesWith(a, b, false)
		for _, p := range full {
			for _, l := range p.lines {
				if p.op != '+' {
					oldB.WriteString(l)
				}
				if p.op != '-' {
					newB.WriteString(l)
				}
			}
		}
		if oldB.String() != a || newB.String() != b {
			t.Fatalf("parts rebuild %q / %q, want %q / %q", oldB.String(), newB.String(), a, b)
		}
		diff, first := generateDiff(a, b)
		if (a == b) != (first == 0) || (a == b) != (diff == "") {
			t.Fatalf("a==b is %v but first changed line %d, diff %q", a == b, first, diff)
		}
		// The common head, abbreviated to what the diff shows of it,
		// renders exactly as when every line is kept.
		if d2, f2 := renderDiff(a, []string{b}, full); d2 != diff || f2 != first {
			t.Fatalf("abbreviated head renders\n%s (%d)\nfull parts render\n%s (%d)", diff, first, d2, f2)
		}
	})
}

// FuzzEditPieces: the new text of an edit is kept in pieces (edit_match.go);
// cut anywhere, the pieces give the diff, the LF view and the equality
// check of the joined text.
func FuzzEditPieces(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nX\nc\n", []byte{2, 3})
	f.Add("x\r\ny\r\n", "x\r\nz\r\n", []byte{1, 4})
	f.Add("\xEF\xBB\xBFa\n", "\xEF\xBB\xBFb\n", []byte{1, 2})
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nx\n11\n", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\ny\n11\n", []byte{0, 5, 5, 30})
	f.Fuzz(func(t *testing.T, a, b string, cuts []byte) {
		pieces := cutPieces(b, cuts)
		want, wantFirst := generateDiff(a, b)
		if got, first := generateDiffPieces(a, pieces); got != want || first != wantFirst {
			t.Fatalf("pieces %q: diff\n%s (%d)\nwhole: diff\n%s (%d)", pieces, got, first, want, wantFirst)
		}
		if got, want := strings.Join(lfPieces(pieces), ""), newLFView(b).text; got != want {
			t.Fatalf("pieces %q: LF view %q, whole %q", pieces, got, want)
		}
		if piecesEqual(pieces, a) != (a == b) {
			t.Fatalf("pieces %q equal %q: %v", pieces, a, !(a == b))
		}
	})
}

// cutPieces cuts s at the offsets cuts name (each taken modulo len(s)+1),
// empty pieces included.
func cutPieces(s string, cuts []byte) []string {
	at := make([]int, 0, len(cuts))
	for _, c := range cuts {
		at = append(at, int(c)%(len(s)+1))
	}
	slices.Sort(at)
	var out []string
	prev := 0
	for _, c := range at {
		out = append(out, s[prev:c])
		prev = c
	}
	return append(out, s[prev:])
}
