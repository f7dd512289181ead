package output

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pi-go/pi/runtime/redact"
)

// expectedTail is what the accumulator must show for a complete output: the
// whole cleaned text cut by TruncateTail, except that an over-long line
// followed only by the final newline shows its end (the contract's fix).
func expectedTail(clean string, maxLines, maxBytes int) (content string, partial bool) {
	t := TruncateTail(clean, maxLines, maxBytes)
	if t.Truncated && !t.LastLinePartial && t.Content == "" && maxLines >= 2 && strings.HasSuffix(clean, "\n") {
		if t2 := TruncateTail(clean[:len(clean)-1], maxLines, maxBytes-1); t2.LastLinePartial {
			return t2.Content + "\n", true
		}
	}
	return t.Content, t.LastLinePartial
}

// accumulate writes raw to a new accumulator in chunks of the given size and
// returns the final snapshot and the accumulator.
func accumulate(t *testing.T, raw []byte, chunk, maxLines, maxBytes int) (Snapshot, *Accumulator) {
	t.Helper()
	a := NewAccumulator(Limits{MaxLines: maxLines, MaxBytes: maxBytes, NewFile: filesIn(t.TempDir())})
	for len(raw) > 0 {
		n := min(chunk, len(raw))
		a.Write(raw[:n])
		raw = raw[n:]
	}
	a.Finish()
	return a.Snapshot(), a
}

// checkAccumulator compares a finished accumulator with the oracle and checks
// the invariants: within limits, valid UTF-8, no ESC or NUL, complete file.
func checkAccumulator(t *testing.T, raw []byte, chunk, maxLines, maxBytes int) {
	t.Helper()
	s, a := accumulate(t, raw, chunk, maxLines, maxBytes)
	clean := sanitizeOutput(raw)
	want, partial := expectedTail(clean, maxLines, maxBytes)
	if s.Content != want {
		t.Fatalf("chunk %d, limits %d/%d: content %q, want %q", chunk, maxLines, maxBytes, s.Content, want)
	}
	tr := s.Truncation
	lines := strings.Count(clean, "\n") + 1
	if tr.TotalLines != int64(lines) || tr.TotalBytes != int64(len(clean)) {
		t.Fatalf("totals %d lines / %d bytes, want %d / %d", tr.TotalLines, tr.TotalBytes, lines, len(clean))
	}
	truncated := lines > maxLines || len(clean) > maxBytes
	if tr.Truncated != truncated || tr.LastLinePartial != partial {
		t.Fatalf("truncated %v partial %v, want %v %v", tr.Truncated, tr.LastLinePartial, truncated, partial)
	}
	if tr.OutputBytes != len(s.Content) || tr.OutputLines != strings.Count(s.Content, "\n")+1 {
		t.Fatalf("output %d lines / %d bytes for content %q", tr.OutputLines, tr.OutputBytes, s.Content)
	}
	if len(s.Content) > maxBytes || tr.OutputLines > maxLines {
		t.Fatalf("content over the limits: %d bytes, %d lines", len(s.Content), tr.OutputLines)
	}
	if !utf8.ValidString(s.Content) || strings.ContainsAny(s.Content, "\x00\x1b") {
		t.Fatalf("content not clean: %q", s.Content)
	}
	if partial {
		// The line shown in part: its number and size.
		lineNo, size := lines, len(clean)-strings.LastIndexByte(clean, '\n')-1
		if strings.HasSuffix(clean, "\n") && lines >= 2 && strings.Count(s.Content, "\n") == 1 {
			body := clean[:len(clean)-1]
			lineNo, size = lines-1, len(body)-strings.LastIndexByte(body, '\n')-1
		}
		if s.PartialLine != int64(lineNo) || s.PartialLineBytes != int64(size) {
			t.Fatalf("partial line %d of %d bytes, want %d of %d", s.PartialLine, s.PartialLineBytes, lineNo, size)
		}
	}
	path := a.filePath
	if err := a.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if truncated {
		if s.FullOutputPath == "" {
			t.Fatalf("truncated without a full output file")
		}
		got, err := os.ReadFile(s.FullOutputPath)
		if err != nil || !bytes.Equal(got, raw) {
			t.Fatalf("full output file: %d bytes, err %v; want the %d raw bytes", len(got), err, len(raw))
		}
	} else {
		if s.FullOutputPath != "" {
			t.Fatalf("full output path %q for an untruncated output", s.FullOutputPath)
		}
		if path != "" {
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("temp file %s left behind for an untruncated output", path)
			}
		}
	}
}

func TestAccumulator(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 40000) // 80000 bytes, one line
	var many strings.Builder
	for i := 0; i < 5000; i++ {
		many.WriteString("\x1b[32mline\x1b[0m ")
		many.WriteString(strings.Repeat("x", i%50))
		many.WriteString("\n")
	}
	cases := []struct {
		name string
		raw  string
	}{
		{"empty", ""},
		{"short", "hello\nworld\n"},
		{"exactly the line limit", strings.Repeat("l\n", 1999) + "l"},
		{"one line over the line limit", strings.Repeat("l\n", 2000)},
		{"exactly the byte limit", strings.Repeat("b", DefaultMaxBytes)},
		{"one byte over", strings.Repeat("b", DefaultMaxBytes+1)},
		{"long multibyte line", long},
		{"long multibyte line then newline", long + "\n"},
		{"long line then short one", long + "\ndone\n"},
		{"short lines then a long one", "a\nb\n" + long},
		{"many coloured lines", many.String()},
		{"escapes make the raw bytes long", strings.Repeat("\x1b[0m", 20000) + "ok\n"},
		{"invalid utf-8 everywhere", strings.Repeat("\xff\xfe\xe2\x82\n", 30000)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, chunk := range []int{1 << 20, 65536, 4093, 7} {
				if chunk == 7 && len(c.raw) > 200000 {
					continue
				}
				checkAccumulator(t, []byte(c.raw), chunk, DefaultMaxLines, DefaultMaxBytes)
			}
		})
	}
}

func TestAccumulatorBoundedMemory(t *testing.T) {
	t.Parallel()
	a := NewAccumulator(Limits{NewFile: filesIn(t.TempDir())})
	chunk := bytes.Repeat([]byte(strings.Repeat("y", 99)+"\n"), 655) // 65500 bytes
	for i := 0; i < 300; i++ {
		a.Write(chunk)
		if held := cap(a.tail) + cap(a.raw) + cap(a.scratch); held > 8*DefaultMaxBytes {
			t.Fatalf("after %d chunks the accumulator holds %d bytes", i+1, held)
		}
	}
	a.Finish()
	s := a.Snapshot()
	if s.Truncation.TotalLines != 300*655+1 || s.Truncation.TruncatedBy != "bytes" || len(s.Content) > DefaultMaxBytes {
		t.Errorf("totals: %+v", s.Truncation)
	}
	fi, err := os.Stat(s.FullOutputPath)
	if err != nil || fi.Size() != int64(300*len(chunk)) {
		t.Errorf("full output file: %v, %v", fi, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestAccumulatorFileError(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "missing")
	a := NewAccumulator(Limits{MaxLines: 3, MaxBytes: 100, NewFile: filesIn(dir)})
	a.Write([]byte("1\n2\n3\n4\n5\n"))
	a.Finish()
	s := a.Snapshot()
	if !s.Truncation.Truncated || s.FullOutputPath != "" || s.FileErr == nil {
		t.Fatalf("snapshot %+v", s)
	}
	if !strings.Contains(s.FileErr.Error(), "missing") {
		t.Errorf("the error does not name the folder: %v", s.FileErr)
	}
	if s.Content != "4\n5\n" {
		t.Errorf("content %q", s.Content)
	}
}

// TestAccumulatorWithoutFile: with no NewFile the output is still cut, and
// the snapshot says the full output was not saved.
func TestAccumulatorWithoutFile(t *testing.T) {
	t.Parallel()
	a := NewAccumulator(Limits{MaxLines: 2, MaxBytes: 100})
	a.Write([]byte("1\n2\n3\n"))
	a.Finish()
	s := a.Snapshot()
	if !s.Truncation.Truncated || s.FullOutputPath != "" || s.FileErr == nil || s.Content != "3\n" {
		t.Fatalf("snapshot %+v", s)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// filesIn makes full-output files in dir, as the bash tool's OutputDir does.
func filesIn(dir string) func() (*os.File, string, error) {
	return func() (*os.File, string, error) {
		f, err := os.CreateTemp(dir, "pi-test-*.log")
		if err != nil {
			return nil, "", fmt.Errorf("create full output file: %w", err)
		}
		return f, f.Name(), nil
	}
}

func FuzzAccumulator(f *testing.F) {
	f.Add([]byte("a\nb\nc\nd\n"), uint8(1), uint8(2), uint8(5))
	f.Add([]byte("\x1b[31mlong line without end\x1b[0m"), uint8(3), uint8(3), uint8(8))
	f.Add([]byte("x\xe2\x82\xacy\n\xff\n"), uint8(2), uint8(4), uint8(4))
	f.Fuzz(func(t *testing.T, raw []byte, chunk, maxLines, maxBytes uint8) {
		checkAccumulator(t, raw, int(chunk%64)+1, int(maxLines%8)+1, int(maxBytes%64)+4)
	})
}

const outKey = "sk-full-output-KEY-0123456789"

// The key never reaches the file, wherever the chunks cut it, and text
// around it is kept byte for byte.
func TestFullOutputRedactsAcrossChunks(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat("x", 60) + "\n"
	var whole strings.Builder
	for whole.Len() < 3*DefaultMaxBytes {
		whole.WriteString(filler)
	}
	whole.WriteString("key=" + outKey + "\n" + outKey + outKey + "\nend\n")
	text := whole.String()
	want := strings.ReplaceAll(text, outKey, redact.Mark)
	at := strings.Index(text, outKey)
	for cut := at - 1; cut <= at+len(outKey)+1; cut++ {
		a := NewAccumulator(Limits{NewFile: filesIn(t.TempDir()), Redactor: redact.New(outKey)})
		a.Write([]byte(text[:cut]))
		a.Write([]byte(text[cut : cut+1]))
		a.Write([]byte(text[cut+1:]))
		a.Finish()
		s := a.Snapshot()
		got, err := os.ReadFile(s.FullOutputPath)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(got, []byte(outKey)) {
			t.Fatalf("cut at %d: the key is in the file", cut)
		}
		if string(got) != want {
			t.Fatalf("cut at %d: file differs from the redacted output (len %d, want %d)", cut, len(got), len(want))
		}
		a.Close()
	}
}
