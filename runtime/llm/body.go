package llm

import (
	"io"
	"unicode/utf8"
)

// requestBody is a request body as pieces of JSON text: literal text, and
// the content of JSON strings held by reference (a message's text, a tool
// call's arguments, an image's data) that are escaped only as the body is
// read. A 20 MB tool call sent back to the model is thus read from the
// conversation's own bytes, never copied into a string, an encoded
// message or a whole body first. The body can be read any number of times
// (a retry, a redirect).
type requestBody struct {
	parts []bodyPart
	size  int64 // the length of the body
}

// bodyPart is literal JSON text (lit), or a piece of a JSON string's
// content to escape as it is read (s or b).
type bodyPart struct {
	lit []byte
	s   string
	b   []byte
	ref bool // s or b
}

// inlineMax is the longest string escaped when written; a longer one is
// escaped as the body is read.
const inlineMax = 4 << 10

// bodyWriter builds a requestBody.
type bodyWriter struct {
	parts []bodyPart
	lit   []byte // the literal text after the last part
}

// raw writes literal JSON text.
func (w *bodyWriter) raw(s string) { w.lit = append(w.lit, s...) }

// str writes s as a JSON string.
func (w *bodyWriter) str(s string) {
	w.raw(`"`)
	w.strPiece(s)
	w.raw(`"`)
}

// strPiece writes s as part of the content of a JSON string the caller
// opened.
func (w *bodyWriter) strPiece(s string) {
	if len(s) <= inlineMax {
		w.lit, _ = appendEscaped(w.lit, s, 0, -1)
		return
	}
	w.flush()
	w.parts = append(w.parts, bodyPart{s: s, ref: true})
}

// bytesPiece is strPiece for bytes.
func (w *bodyWriter) bytesPiece(b []byte) {
	if len(b) <= inlineMax {
		w.lit, _ = appendEscaped(w.lit, b, 0, -1)
		return
	}
	w.flush()
	w.parts = append(w.parts, bodyPart{b: b, ref: true})
}

func (w *bodyWriter) flush() {
	if len(w.lit) > 0 {
		w.parts = append(w.parts, bodyPart{lit: w.lit})
		w.lit = nil
	}
}

// body returns what was written, measuring the strings held by reference
// (escaped once here to count, once more when read).
func (w *bodyWriter) body() *requestBody {
	w.flush()
	b := &requestBody{parts: w.parts}
	scratch := make([]byte, 0, escapeChunk+escapeMaxStep)
	for _, p := range b.parts {
		switch {
		case !p.ref:
			b.size += int64(len(p.lit))
		case p.b != nil:
			b.size += escapedLen(scratch, p.b)
		default:
			b.size += escapedLen(scratch, p.s)
		}
	}
	return b
}

// escapeChunk is how much escaped text a reader makes at a time;
// escapeMaxStep is the most one character adds (\u00XX).
const (
	escapeChunk   = 16 << 10
	escapeMaxStep = 6
)

func escapedLen[T string | []byte](scratch []byte, src T) int64 {
	n := int64(0)
	for i := 0; i < len(src); {
		var out []byte
		out, i = appendEscaped(scratch[:0], src, i, escapeChunk)
		n += int64(len(out))
	}
	return n
}

// reader returns a reader of the body from its start.
func (b *requestBody) reader() io.Reader {
	return &bodyReader{parts: b.parts}
}

type bodyReader struct {
	parts   []bodyPart
	i       int    // the part being read
	off     int    // how far the part's string was escaped
	pending []byte // read but not yet returned
	scratch []byte
}

func (r *bodyReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.pending) > 0 {
			c := copy(p[n:], r.pending)
			r.pending = r.pending[c:]
			n += c
			continue
		}
		if r.i == len(r.parts) {
			if n == 0 {
				return 0, io.EOF
			}
			break
		}
		part := &r.parts[r.i]
		if !part.ref {
			r.pending = part.lit
			r.i++
			continue
		}
		if r.scratch == nil {
			r.scratch = make([]byte, 0, escapeChunk+escapeMaxStep)
		}
		done := false
		if part.b != nil {
			r.pending, r.off = appendEscaped(r.scratch[:0], part.b, r.off, escapeChunk)
			done = r.off == len(part.b)
		} else {
			r.pending, r.off = appendEscaped(r.scratch[:0], part.s, r.off, escapeChunk)
			done = r.off == len(part.s)
		}
		if done {
			r.i++
			r.off = 0
		}
	}
	return n, nil
}

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
