package output

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of what a tool result shows, the reference agent's.
const (
	// DefaultMaxLines is the most lines a tool result shows.
	DefaultMaxLines = 2000
	// DefaultMaxBytes is the most bytes a tool result shows (50KB).
	DefaultMaxBytes = 50 * 1024
)

// FormatSize renders a byte count as "123B", "50.0KB" or "1.2MB" (1024-based,
// one decimal, halves rounded up as the reference agent's toFixed does).
func FormatSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return oneDecimal(int64(n), 1024) + "KB"
	default:
		return oneDecimal(int64(n), 1024*1024) + "MB"
	}
}

// oneDecimal renders n/unit with one decimal, rounding halves up, in exact
// integer arithmetic.
func oneDecimal(n, unit int64) string {
	tenths := (n*20 + unit) / (2 * unit)
	return fmt.Sprintf("%d.%d", tenths/10, tenths%10)
}

// Truncation is the outcome of TruncateHead or TruncateTail. Its JSON form
// (camelCase, as the reference agent's) goes into tool result details.
type Truncation struct {
	// Content is the kept text.
	Content string `json:"content"`
	// Truncated reports whether anything was cut.
	Truncated bool `json:"truncated"`
	// TruncatedBy is "lines" or "bytes" when cut, "" otherwise.
	TruncatedBy string `json:"truncatedBy,omitempty"`
	// TotalLines and TotalBytes describe the input; lines are the pieces of
	// the text split on "\n".
	TotalLines int `json:"totalLines"`
	TotalBytes int `json:"totalBytes"`
	// OutputLines and OutputBytes describe Content.
	OutputLines int `json:"outputLines"`
	OutputBytes int `json:"outputBytes"`
	// LastLinePartial is set by TruncateTail when a single last line longer
	// than the byte limit was cut to its last bytes.
	LastLinePartial bool `json:"lastLinePartial"`
	// FirstLineExceedsLimit is set by TruncateHead when the first line alone
	// is over the byte limit (Content is then empty).
	FirstLineExceedsLimit bool `json:"firstLineExceedsLimit"`
}

// TruncateHead keeps the start of s: at most maxLines lines and maxBytes
// bytes, whole lines only. When the first line alone is over maxBytes the
// content is empty and FirstLineExceedsLimit is set.
func TruncateHead(s string, maxLines, maxBytes int) Truncation {
	total := strings.Count(s, "\n") + 1
	t := Truncation{TotalLines: total, TotalBytes: len(s)}
	if total <= maxLines && len(s) <= maxBytes {
		t.Content, t.OutputLines, t.OutputBytes = s, total, len(s)
		return t
	}
	t.Truncated = true
	first := s
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		first = s[:i]
	}
	if len(first) > maxBytes {
		t.TruncatedBy = "bytes"
		t.FirstLineExceedsLimit = true
		return t
	}
	t.TruncatedBy = "lines"
	end, lines, rest := 0, 0, s
	for lines < maxLines {
		i := strings.IndexByte(rest, '\n')
		lineLen := len(rest)
		if i >= 0 {
			lineLen = i
		}
		next := end + lineLen
		if lines > 0 {
			next++ // the newline before this line
		}
		if next > maxBytes {
			t.TruncatedBy = "bytes"
			break
		}
		end, lines = next, lines+1
		if i < 0 {
			break
		}
		rest = rest[i+1:]
	}
	t.Content = s[:end]
	t.OutputLines, t.OutputBytes = lines, end
	return t
}

// TruncateTail keeps the end of s: at most maxLines lines and maxBytes bytes,
// whole lines only, except that a single last line longer than maxBytes keeps
// its last maxBytes bytes (never splitting a UTF-8 sequence) and sets
// LastLinePartial.
func TruncateTail(s string, maxLines, maxBytes int) Truncation {
	total := strings.Count(s, "\n") + 1
	t := Truncation{TotalLines: total, TotalBytes: len(s)}
	if total <= maxLines && len(s) <= maxBytes {
		t.Content, t.OutputLines, t.OutputBytes = s, total, len(s)
		return t
	}
	t.Truncated = true
	t.TruncatedBy = "lines"
	start, lines, rest := len(s), 0, s
	for lines < maxLines {
		i := strings.LastIndexByte(rest, '\n')
		line := rest[i+1:]
		size := len(line)
		if lines > 0 {
			size++ // the newline after this line
		}
		if len(s)-start+size > maxBytes {
			t.TruncatedBy = "bytes"
			if lines == 0 {
				cut := len(line) - maxBytes
				for cut < len(line) && !utf8.RuneStart(line[cut]) {
					cut++
				}
				start = len(s) - (len(line) - cut)
				lines = 1
				t.LastLinePartial = true
			}
			break
		}
		start -= size
		lines++
		if i < 0 {
			break
		}
		rest = rest[:i]
	}
	t.Content = s[start:]
	t.OutputLines, t.OutputBytes = lines, len(t.Content)
	return t
}

// TruncateLine cuts line to maxChars characters and adds "... [truncated]"
// when it was longer. It reports whether it cut.
func TruncateLine(line string, maxChars int) (string, bool) {
	if utf8.RuneCountInString(line) <= maxChars {
		return line, false
	}
	n := 0
	for i := range line {
		if n == maxChars {
			return line[:i] + "... [truncated]", true
		}
		n++
	}
	return line, false
}
