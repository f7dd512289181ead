package builtin

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/output"
)

// readModel is what read must return for a window, computed the plain way:
// the whole text in memory, split on "\n", sliced, then output.TruncateHead.
func readModel(content string, offset, limit int) (string, bool) {
	text, isErr, _ := readModelTruncation(content, offset, limit)
	return text, isErr
}

// readModelTruncation is readModel with the Truncation of the window (nil
// when read must not report one).
func readModelTruncation(content string, offset, limit int) (string, bool, *output.Truncation) {
	if limit == 0 {
		return "limit must be at least 1 (got 0): it is the number of lines to read from offset; leave it out to read to the end of the file", true, nil
	}
	lines := strings.Split(content, "\n")
	start := max(0, offset-1)
	if start >= len(lines) {
		return fmt.Sprintf("Offset %d is beyond end of file (%d lines total)", offset, len(lines)), true, nil
	}
	end := len(lines)
	if limit >= 0 {
		end = min(start+limit, len(lines))
	}
	t := output.TruncateHead(strings.Join(lines[start:end], "\n"), output.DefaultMaxLines, output.DefaultMaxBytes)
	s := start + 1
	switch {
	case t.FirstLineExceedsLimit:
		return fmt.Sprintf("[Line %d is %s, exceeds 50.0KB limit. Use bash: sed -n '%dp' f.txt | head -c 51200]", s, output.FormatSize(len(lines[start])), s), false, &t
	case t.Truncated && t.TruncatedBy == "lines":
		e := s + t.OutputLines - 1
		return fmt.Sprintf("%s\n\n[Showing lines %d-%d of %d. Use offset=%d to continue.]", t.Content, s, e, len(lines), e+1), false, &t
	case t.Truncated:
		e := s + t.OutputLines - 1
		return fmt.Sprintf("%s\n\n[Showing lines %d-%d of %d (50.0KB limit). Use offset=%d to continue.]", t.Content, s, e, len(lines), e+1), false, &t
	case limit >= 0 && end < len(lines):
		return fmt.Sprintf("%s\n\n[%d more lines in file. Use offset=%d to continue.]", t.Content, len(lines)-end, end+1), false, nil
	}
	return t.Content, false, nil
}

// TestReadMatchesInMemoryModel reads many windows of a file larger than the
// read buffer (lines of random lengths, some over 50KB, so lines straddle
// chunk boundaries) and compares with readModel.
func TestReadMatchesInMemoryModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < 3*readChunkSize {
		n := rng.IntN(300)
		switch rng.IntN(40) {
		case 0:
			n = 0
		case 1:
			n = output.DefaultMaxBytes + rng.IntN(20000) // a line alone over the limit
		}
		b.WriteString(strings.Repeat(string(rune('a'+rng.IntN(26))), n))
		b.WriteByte('\n')
	}
	content := b.String()
	if rng.IntN(2) == 0 {
		content += "no newline at the end"
	}
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "f.txt"), content)
	total := strings.Count(content, "\n") + 1
	offsets := []int{0, 1, 2, total / 2, total - 1, total, total + 1}
	for range 25 {
		offsets = append(offsets, 1+rng.IntN(total))
	}
	for _, off := range offsets {
		for _, limit := range []int{-1, 0, 1, 7, 2500} {
			args := map[string]any{"path": "f.txt", "offset": off}
			if limit >= 0 {
				args["limit"] = limit
			}
			r := callTool(t, dir, "read", args)
			want, wantErr, wantT := readModelTruncation(content, off, limit)
			if r.Text() != want || r.IsError != wantErr {
				t.Fatalf("offset %d limit %d:\n got %q\nwant %q", off, limit, trimForLog(r.Text()), trimForLog(want))
			}
			d, _ := r.Details.(readDetails)
			if (wantT == nil) != (d.Truncation == nil) {
				t.Fatalf("offset %d limit %d: details %+v, want truncation %v", off, limit, r.Details, wantT != nil)
			}
			if wantT != nil && *d.Truncation != *wantT {
				got, want := *d.Truncation, *wantT
				got.Content, want.Content = "", ""
				t.Fatalf("offset %d limit %d: truncation\n got %+v\nwant %+v", off, limit, got, want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "f.txt")); err != nil {
		t.Fatal(err)
	}
}
