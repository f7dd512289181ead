package llm

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON strings written and read in pieces, without a string of the whole:
// encoding/json has no API for either, so these two follow its rules
// exactly, and FuzzAppendEscaped and FuzzAppendUnquoted hold them to its
// bytes.

// appendEscaped appends src[i:] to dst as the content of a JSON string, as
// encoding/json's Marshal writes a string (HTML escaping on: <, > and &
// as \u003c, \u003e and \u0026; U+2028 and U+2029 escaped; each byte of
// invalid UTF-8 as \ufffd), and returns dst and where in src it stopped:
// at the end, or once dst holds limit bytes or more (limit < 0: no limit;
// one character adds at most escapeMaxStep). Each character is decoded
// from src as a whole, so escaping in steps gives exactly what escaping
// at once gives. FuzzAppendEscaped holds it to encoding/json's bytes.
func appendEscaped[T string | []byte](dst []byte, src T, i, limit int) ([]byte, int) {
	if limit < 0 {
		limit = int(^uint(0) >> 1)
	}
	start := i
	for i < len(src) && len(dst)+(i-start) < limit {
		c := src[i]
		if c < utf8.RuneSelf {
			if htmlSafe(c) {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		n := min(len(src)-i, utf8.UTFMax)
		r, size := utf8.DecodeRuneInString(string(src[i : i+n]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, src[start:i]...), i
}

const hexDigits = "0123456789abcdef"

// htmlSafe reports an ASCII byte that encoding/json writes as it is with
// HTML escaping on.
func htmlSafe(c byte) bool {
	return c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// appendUnquoted appends the text of the JSON string literal q (quotes
// included) to dst as encoding/json decodes it into a string: escapes
// decoded, a \u escape of a lone surrogate and each byte of invalid UTF-8
// as U+FFFD. ok is false when q is not a JSON string literal (which a
// literal that encoding/json's scanner took never is).
func appendUnquoted(dst, q []byte) (_ []byte, ok bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return dst, false
	}
	s := q[1 : len(q)-1]
	start := 0
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			dst = append(dst, s[start:r]...)
			r++
			if r >= len(s) {
				return dst, false
			}
			switch s[r] {
			case '"', '\\', '/', '\'':
				dst = append(dst, s[r])
				r++
			case 'b':
				dst = append(dst, '\b')
				r++
			case 'f':
				dst = append(dst, '\f')
				r++
			case 'n':
				dst = append(dst, '\n')
				r++
			case 'r':
				dst = append(dst, '\r')
				r++
			case 't':
				dst = append(dst, '\t')
				r++
			case 'u':
				r--
				rr := getu4(s[r:])
				if rr < 0 {
					return dst, false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != unicode.ReplacementChar {
						r += 6
						dst = utf8.AppendRune(dst, dec)
						break
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
			default:
				return dst, false
			}
			start = r
		case c == '"', c < ' ':
			return dst, false
		case c < utf8.RuneSelf:
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			if rr == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:r]...)
				dst = utf8.AppendRune(dst, rr)
				r++
				start = r
				continue
			}
			r += size
		}
	}
	return append(dst, s[start:]...), true
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
