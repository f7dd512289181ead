package llm

import "io"

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

// rawBytes writes literal JSON text held by reference when it is long
// (a call's arguments sent as a JSON value).
func (w *bodyWriter) rawBytes(b []byte) {
	if len(b) <= inlineMax {
		w.lit = append(w.lit, b...)
		return
	}
	w.flush()
	w.parts = append(w.parts, bodyPart{lit: b})
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
