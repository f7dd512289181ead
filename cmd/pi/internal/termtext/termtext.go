// Package termtext holds what every text front end of pi (the line and
// print modes, the TUI, RPC's stderr, the CLI's listings) does to text
// before a terminal shows it: control characters made harmless, long
// values cut.
package termtext

import "strings"

// Printable replaces what an extension's or a model's text could use to
// drive the terminal — control characters other than newline and tab,
// DEL and the C1 controls (ESC sequences that move the cursor, rewrite a
// line, set the title) — with "�", so a notice or a question cannot fake
// another prompt.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return '\uFFFD'
		}
		return r
	}, s)
}

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
