package output

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFormatSize(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{0, "0B"}, {123, "123B"}, {1023, "1023B"}, {1024, "1.0KB"},
		{1280, "1.3KB"}, // exact half rounds up, as toFixed does
		{1331, "1.3KB"}, {51200, "50.0KB"}, {1024*1024 - 1, "1024.0KB"},
		{1024 * 1024, "1.0MB"}, {1258291, "1.2MB"}, {5 * 1024 * 1024 * 1024, "5120.0MB"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := FormatSize(tt.n); got != tt.want {
				t.Errorf("FormatSize(%d) = %q, want %q", tt.n, got, tt.want)
			}
		})
	}
}

func TestTruncateHead(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		lines, bytes int
		want         string
		by           string
		outLines     int
		firstExceeds bool
		totalLines   int
	}{
		{"fits", "a\nb\nc", 3, 100, "a\nb\nc", "", 3, false, 3},
		{"trailing newline is a last empty line", "a\nb\n", 2, 100, "a\nb", "lines", 2, false, 3},
		{"line limit", "1\n2\n3\n4", 2, 100, "1\n2", "lines", 2, false, 4},
		{"byte limit whole lines only", "aaa\nbbb\nccc", 10, 9, "aaa\nbbb", "bytes", 2, false, 3},
		{"byte limit exact fit", "aaa\nbbb\nccc", 10, 7, "aaa\nbbb", "bytes", 2, false, 3},
		{"first line over limit", "aaaaaaaaaa\nb", 10, 5, "", "bytes", 0, true, 2},
		{"multibyte kept whole", "héé\nxyz", 10, 6, "héé", "bytes", 1, false, 2},
		{"empty", "", 10, 10, "", "", 1, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TruncateHead(tt.in, tt.lines, tt.bytes)
			if got.Content != tt.want || got.TruncatedBy != tt.by || got.OutputLines != tt.outLines ||
				got.FirstLineExceedsLimit != tt.firstExceeds || got.TotalLines != tt.totalLines ||
				got.Truncated != (tt.by != "") || got.OutputBytes != len(got.Content) || got.TotalBytes != len(tt.in) {
				t.Errorf("TruncateHead(%q, %d, %d) = %+v", tt.in, tt.lines, tt.bytes, got)
			}
		})
	}
}

func TestTruncateTail(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		lines    int
		bytes    int
		want     string
		by       string
		outLines int
		partial  bool
	}{
		{"fits", "a\nb", 2, 10, "a\nb", "", 2, false},
		{"line limit keeps the end", "1\n2\n3\n4", 2, 100, "3\n4", "lines", 2, false},
		{"trailing newline", "1\n2\n", 2, 100, "2\n", "lines", 2, false},
		{"byte limit whole lines", "aaa\nbbb\nccc", 10, 9, "bbb\nccc", "bytes", 2, false},
		{"one long last line keeps its end", "x\n0123456789", 10, 4, "6789", "bytes", 1, true},
		{"partial line never splits UTF-8", "x\naaéé", 10, 3, "é", "bytes", 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TruncateTail(tt.in, tt.lines, tt.bytes)
			if got.Content != tt.want || got.TruncatedBy != tt.by || got.OutputLines != tt.outLines ||
				got.LastLinePartial != tt.partial || got.OutputBytes != len(got.Content) {
				t.Errorf("TruncateTail(%q, %d, %d) = %+v", tt.in, tt.lines, tt.bytes, got)
			}
		})
	}
}

func TestTruncateLine(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
		cut  bool
	}{
		{"short", 10, "short", false},
		{"exactly", 7, "exactly", false},
		{"abcdef", 3, "abc... [truncated]", true},
		{"ééééé", 2, "éé... [truncated]", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, cut := TruncateLine(tt.in, tt.max)
			if got != tt.want || cut != tt.cut {
				t.Errorf("TruncateLine(%q, %d) = %q, %v", tt.in, tt.max, got, cut)
			}
		})
	}
}

// FuzzTruncate checks the invariants of both truncations: output within the
// limits, a prefix (head) or suffix (tail) of the input, whole lines only
// (except the tail's one partial line), valid UTF-8 kept valid.
func FuzzTruncate(f *testing.F) {
	f.Add("a\nb\nc", 2, 3)
	f.Add("héllo\nwörld\n", 1, 4)
	f.Add(strings.Repeat("x", 100)+"\ny", 5, 10)
	f.Add("", 0, 0)
	f.Fuzz(func(t *testing.T, s string, maxLines, maxBytes int) {
		maxLines, maxBytes = abs(maxLines)%50, abs(maxBytes)%200
		h := TruncateHead(s, maxLines, maxBytes)
		if h.Truncated {
			if len(h.Content) > maxBytes || h.OutputLines > maxLines {
				t.Fatalf("head over limits: %+v", h)
			}
		} else if h.Content != s {
			t.Fatalf("head changed untruncated input")
		}
		if !strings.HasPrefix(s, h.Content) {
			t.Fatalf("head is not a prefix")
		}
		if h.Truncated && h.Content != "" && s[len(h.Content)] != '\n' {
			t.Fatalf("head cut inside a line: %q of %q", h.Content, s)
		}
		if h.TotalLines != strings.Count(s, "\n")+1 || h.OutputBytes != len(h.Content) {
			t.Fatalf("head counts wrong: %+v", h)
		}
		tl := TruncateTail(s, maxLines, maxBytes)
		if tl.Truncated && (len(tl.Content) > maxBytes || tl.OutputLines > maxLines) {
			t.Fatalf("tail over limits: %+v", tl)
		}
		if !strings.HasSuffix(s, tl.Content) {
			t.Fatalf("tail is not a suffix")
		}
		if tl.Truncated && !tl.LastLinePartial && tl.Content != "" && s[len(s)-len(tl.Content)-1] != '\n' {
			t.Fatalf("tail cut inside a line: %q of %q", tl.Content, s)
		}
		if utf8.ValidString(s) && (!utf8.ValidString(h.Content) || !utf8.ValidString(tl.Content)) {
			t.Fatalf("split a UTF-8 sequence")
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n {
			return 0
		}
		return -n
	}
	return n
}
