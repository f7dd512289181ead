package output

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want string
	}{
		{"plain text", "hello\tworld\r\n", "hello\tworld\r\n"},
		{"sgr colours", "\x1b[1;31mred\x1b[0m and \x1b[38;5;208morange\x1b[m", "red and orange"},
		{"cursor movement", "\x1b[2K\x1b[1Gprogress 50%\x1b[?25l", "progress 50%"},
		{"osc title ended by bel", "\x1b]0;my title\x07after", "after"},
		{"osc hyperlink ended by st", "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"dcs string", "\x1bPq#0;2;0;0;0#0~~\x1b\\after", "after"},
		{"apc, pm and sos strings", "\x1b_apc\x1b\\a\x1b^pm\x1b\\b\x1bXsos\x1b\\c", "abc"},
		{"two-byte escapes", "\x1b7x\x1b8\x1b=y\x1b(Bz\x1bc", "xyz"},
		{"unterminated osc stops at newline", "\x1b]0;title\nnext", "\nnext"},
		{"csi cancelled by a control", "\x1b[31\nx", "\nx"},
		{"esc esc", "\x1b\x1b[31mx", "x"},
		{"esc at end", "x\x1b", "x"},
		{"control characters dropped", "a\x00b\x07c\x08d\x7fe\x01f", "abcdef"},
		{"utf-8 kept", "héllo ✓ 😀", "héllo ✓ 😀"},
		{"invalid byte", "a\xffb", "a\uFFFDb"},
		{"each invalid byte is replaced", "\xe2\x82A", "\uFFFD\uFFFDA"},
		{"cut sequence at the end", "A\xe2\x82", "A\uFFFD"},
		{"surrogate", "\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},
		{"c1 controls dropped", "a\u009bb\u0085c", "abc"},
		{"utf-8 inside osc swallowed", "\x1b]0;tïtle\x07ok", "ok"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := sanitizeOutput([]byte(c.in)); got != c.want {
				t.Errorf("sanitize(%q) = %q, want %q", c.in, got, c.want)
			}
			// Any split into chunks gives the same result.
			for cut := 0; cut <= len(c.in); cut++ {
				if got := sanitizeChunks([]byte(c.in), cut); got != c.want {
					t.Errorf("split at %d: %q, want %q", cut, got, c.want)
				}
			}
			if got := sanitizeChunks([]byte(c.in), -1); got != c.want {
				t.Errorf("byte by byte: %q, want %q", got, c.want)
			}
		})
	}
}

// sanitizeChunks feeds p in two chunks split at cut, or byte by byte when
// cut is negative.
func sanitizeChunks(p []byte, cut int) string {
	var s sanitizer
	var out []byte
	if cut < 0 {
		for i := range p {
			out = s.write(out, p[i:i+1])
		}
	} else {
		out = s.write(out, p[:cut])
		out = s.write(out, p[cut:])
	}
	return string(s.finish(out))
}

// checkClean asserts the sanitizer's output invariants.
func checkClean(t *testing.T, in []byte, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("output is not valid UTF-8: %q", out)
	}
	for _, r := range out {
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			t.Fatalf("output keeps control character %U: %q", r, out)
		}
	}
	// Newlines are never removed or added: line numbers of the clean text
	// are those of the raw output.
	if got, want := bytes.Count([]byte(out), []byte{'\n'}), bytes.Count(in, []byte{'\n'}); got != want {
		t.Fatalf("output has %d newlines, input %d", got, want)
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "plain\n", "\x1b[31mred\x1b[0m\n", "\x1b]0;t\x07x", "a\xffb\xe2\x82", "\x1bP\x1b\\", "😀\x00\x1b"} {
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint16) {
		whole := sanitizeOutput(in)
		checkClean(t, in, whole)
		c := int(cut) % (len(in) + 1)
		if split := sanitizeChunks(in, c); split != whole {
			t.Fatalf("split at %d gives %q, whole gives %q", c, split, whole)
		}
	})
}

// TestPlainWord checks the word-at-a-time test: a word is called plain
// exactly when its bytes are printable ASCII or newlines, for every byte
// value in every position, next to every neighbour (a newline or control
// byte below a space once raised a false alarm through a borrow).
func TestPlainWord(t *testing.T) {
	t.Parallel()
	for pos := 0; pos < 8; pos++ {
		for v := 0; v < 256; v++ {
			word := []byte("a~ Z0}!@")
			word[pos] = byte(v)
			if pos < 7 {
				word[pos+1] = ' '
			}
			w := uint64(0)
			for i := 7; i >= 0; i-- {
				w = w<<8 | uint64(word[i])
			}
			printable := (v >= 0x20 && v < 0x7f) || v == '\n'
			if got := plainWord(w) == 0; got != printable {
				t.Fatalf("byte %#x at %d: plain %v, want %v", v, pos, got, printable)
			}
		}
	}
}
