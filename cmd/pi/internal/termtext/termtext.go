// Package termtext owns the one rule for text that pi did not write itself
// (the model's words, tool output, what extensions, MCP servers and
// session files say) on its way to a terminal: Printable applies it to a
// string, Writer to a stream. Every front end uses it: the TUI, the line
// and print modes, RPC's stderr, the CLI's listings, errors and log lines.
package termtext

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// IsControl reports whether Printable drops r: every C0 control character
// but newline and tab (ESC, which starts CSI, OSC and DCS sequences; BEL
// and the carriage return and backspace that overwrite a line), DEL, every
// C1 control (U+0080–U+009F: 0x9b is CSI and 0x9d OSC to a terminal that
// reads 8-bit controls), the line and paragraph separators, and the
// Unicode Bidi_Control characters (U+061C, U+200E, U+200F,
// U+202A–U+202E, U+2066–U+2069), which make a terminal that reorders
// right-to-left text show characters in another order than they are.
func IsControl(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r == '\u2028' || r == '\u2029':
		return true
	}
	return r >= 0x61c && unicode.Is(unicode.Bidi_Control, r)
}

// Printable makes s safe to show on a terminal: what IsControl reports is
// dropped (so an escape sequence loses its introducer and is shown as the
// harmless text that follows, a "\r\n" line end becomes "\n"), and every
// byte that is not UTF-8 becomes U+FFFD (a lone 0x9b byte is CSI to a
// terminal that reads 8-bit controls). Newlines and tabs stay.
func Printable(s string) string {
	// Most text is printable ASCII, which stays as it is: a byte at a time
	// up to the first byte that needs a closer look.
	i := 0
	for i < len(s) && (s[i] >= 0x20 && s[i] < 0x7f || s[i] == '\n' || s[i] == '\t') {
		i++
	}
	if rest := s[i:]; !strings.ContainsFunc(rest, IsControl) && utf8.ValidString(rest) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if IsControl(r) {
			return -1
		}
		return r // an invalid byte comes as utf8.RuneError and is written as U+FFFD
	}, s)
}

// Writer applies Printable (or, made by NewJSONWriter, EscapeJSON) to
// everything written through it, as a stream: a rune split between two
// writes is kept until its end comes, and is not turned into U+FFFD. It is
// safe for concurrent use.
type Writer struct {
	w       io.Writer
	apply   func(string) string
	json    bool
	mu      sync.Mutex
	pending []byte // the start of a rune that the next write may complete
}

// NewWriter returns w with Printable applied to all that is written to
// it; w itself if it is a *Writer with that rule already.
func NewWriter(w io.Writer) *Writer {
	if tw, ok := w.(*Writer); ok && !tw.json {
		return tw
	}
	return &Writer{w: Raw(w), apply: Printable}
}

// NewJSONWriter returns Raw(w) with EscapeJSON applied to all that is
// written to it: for JSON that encoding/json wrote, whose text must stay
// exact.
func NewJSONWriter(w io.Writer) *Writer {
	if tw, ok := w.(*Writer); ok && tw.json {
		return tw
	}
	return &Writer{w: Raw(w), apply: EscapeJSON, json: true}
}

// EscapeJSON writes every character of the JSON text s that IsControl
// reports as a \uXXXX escape, and every byte that is not UTF-8 as
// U+FFFD. encoding/json escapes the C0 controls and the line separators
// but leaves DEL, the C1 controls (U+009B is CSI to a terminal) and the
// bidi controls raw. In JSON those characters can only stand inside
// strings, so the escaped text decodes to the same values; s must not
// hold a raw control character between values (encoding/json writes
// none: its whitespace is newlines and spaces).
func EscapeJSON(s string) string {
	if !strings.ContainsFunc(s, IsControl) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if IsControl(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r) // utf8.RuneError for a byte that is not UTF-8
		}
	}
	return b.String()
}

// Write writes the rule's output for p to the underlying writer. It
// reports len(p) when that succeeded, since what is dropped was written
// as far as the caller can tell.
func (tw *Writer) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	b := p
	if len(tw.pending) > 0 {
		b = append(tw.pending, p...)
		tw.pending = nil
	}
	// Keep an incomplete rune at the end for the next write.
	if cut := incompleteTail(b); cut < len(b) {
		tw.pending = append([]byte(nil), b[cut:]...)
		b = b[:cut]
	}
	if len(b) == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(tw.w, tw.apply(string(b))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Raw is the writer under tw: for what pi writes itself that must reach
// the terminal as written (the TUI's screen, a spinner's carriage
// returns, exact JSON).
func (tw *Writer) Raw() io.Writer { return tw.w }

// Raw returns the writer under w when w is a *Writer, else w.
func Raw(w io.Writer) io.Writer {
	if tw, ok := w.(*Writer); ok {
		return tw.w
	}
	return w
}

// incompleteTail returns where an incomplete UTF-8 sequence at the end of
// b starts (len(b) when there is none): a lead byte followed by fewer
// continuation bytes than it announces.
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		c := b[i]
		if c&0xC0 == 0x80 {
			continue // a continuation byte: look further back for its lead
		}
		if c < 0xC0 {
			return len(b) // ASCII: the tail is complete
		}
		if !utf8.FullRune(b[i:]) {
			return i
		}
		return len(b)
	}
	return len(b)
}

// OneLine is s's first line, with " …" when more followed: for a title, an
// option or a command line, which must not pass for several lines.
func OneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// IndentLater indents every line of s after the first by two spaces: a
// notice's or a question's later lines, which must not pass for a prompt,
// a question or a tool line of pi's own.
func IndentLater(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// Cut shortens s to at most n bytes, cutting at a rune boundary and
// adding "...".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}

// Flat is s as one line of an extension's display (ABI 1.2's Lines,
// statuses, titles): Printable's rule, and newlines and tabs, which are
// control characters too, removed as well.
func Flat(s string) string {
	s = Printable(s)
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return -1
		}
		return r
	}, s)
}
