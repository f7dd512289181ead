package llm

import (
	"io"
	"net"
	"sync"
	"unsafe"
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
	// cache, when set, holds the escaped text of the strings of earlier
	// bodies (escapeCache).
	cache *escapeCache
	gen   uint64 // the cache's generation this body marks its strings with
}

// Bounds of the strings an escapeCache keeps: shorter ones cost less to
// escape than to look up; longer ones are escaped as the body is read, so
// that a 20 MB call's text is never held twice.
const (
	cacheMin = 256
	cacheMax = 1 << 20
)

// escapeKeep is how many bodies an escapeCache entry outlives unused: the
// strings of a conversation's history are in every one of its requests,
// and a few conversations may share a provider (sub-agents).
const escapeKeep = 8

// escapeCache holds the escaped JSON text of the long strings (a message's
// text, a call's arguments, an image's data) of a provider's recent
// request bodies, so that a conversation's history is escaped once, not
// again in every turn's request. A string is known by where its bytes are
// and how many there are: a Go string never changes, and the messages'
// bytes (RawArguments) are not changed once a message is made (the body
// holds them by reference for a retry already). The entry holds the
// string, so its memory cannot be reused for other bytes while it is
// cached. Entries unused in the last escapeKeep bodies are dropped.
type escapeCache struct {
	mu  sync.Mutex
	gen uint64
	m   map[escapeKey]*escaped
}

type escapeKey struct {
	p *byte
	n int
}

type escaped struct {
	text []byte
	gen  uint64
}

func newEscapeCache() *escapeCache { return &escapeCache{m: map[escapeKey]*escaped{}} }

// begin starts a body: it returns the generation its strings are marked
// with and drops the entries no recent body used.
func (c *escapeCache) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k, e := range c.m {
		if e.gen+escapeKeep < c.gen {
			delete(c.m, k)
		}
	}
	return c.gen
}

// text returns the escaped text of the string s or the bytes b (the one
// k names), escaping it the first time.
func (c *escapeCache) text(gen uint64, k escapeKey, s string, b []byte) []byte {
	c.mu.Lock()
	e := c.m[k]
	if e != nil {
		e.gen = max(e.gen, gen)
	}
	c.mu.Unlock()
	if e != nil {
		return e.text
	}
	var text []byte
	if b != nil {
		text, _ = appendEscaped(make([]byte, 0, len(b)+len(b)/8), b, 0, -1)
	} else {
		text, _ = appendEscaped(make([]byte, 0, len(s)+len(s)/8), s, 0, -1)
	}
	c.mu.Lock()
	c.m[k] = &escaped{text: text, gen: gen}
	c.mu.Unlock()
	return text
}

// How a piece of a JSON string is written (bodyWriter.how).
const (
	escapeNow = iota // escaped into the literal text
	fromCache        // the cache's escaped text
	byRef            // held by reference, escaped as the body is read
)

// how says how a string of n bytes is written: escaped now when short,
// from the cache when it keeps strings of that size, else by reference.
func (w *bodyWriter) how(n int) int {
	switch {
	case n < cacheMin || w.cache == nil && n <= inlineMax:
		return escapeNow
	case w.cache != nil && n <= cacheMax:
		return fromCache
	}
	return byRef
}

// cached writes the cache's escaped text of s or b.
func (w *bodyWriter) cached(k escapeKey, s string, b []byte) {
	text := w.cache.text(w.gen, k, s, b)
	if len(text) <= inlineMax {
		w.lit = append(w.lit, text...)
		return
	}
	w.flush()
	w.parts = append(w.parts, bodyPart{lit: text})
}

// withCache makes w write the strings c keeps from c (a new body of c's).
func (w *bodyWriter) withCache(c *escapeCache) {
	w.cache = c
	w.gen = c.begin()
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
	switch w.how(len(s)) {
	case escapeNow:
		w.lit, _ = appendEscaped(w.lit, s, 0, -1)
	case fromCache:
		w.cached(escapeKey{unsafe.StringData(s), len(s)}, s, nil)
	default:
		w.flush()
		w.parts = append(w.parts, bodyPart{s: s, ref: true})
	}
}

// bytesPiece is strPiece for bytes.
func (w *bodyWriter) bytesPiece(b []byte) {
	switch w.how(len(b)) {
	case escapeNow:
		w.lit, _ = appendEscaped(w.lit, b, 0, -1)
	case fromCache:
		w.cached(escapeKey{unsafe.SliceData(b), len(b)}, "", b)
	default:
		w.flush()
		w.parts = append(w.parts, bodyPart{b: b, ref: true})
	}
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

// reader returns a reader of the body from its start. It is the
// request's body as it is (a ReadCloser), not behind io.NopCloser, so
// that the connection knows it (bodyConn).
func (b *requestBody) reader() io.ReadCloser {
	return &bodyReader{parts: b.parts, left: b.size}
}

type bodyReader struct {
	parts   []bodyPart
	i       int    // the part being read
	off     int    // how far the part's string was escaped
	pending []byte // read but not yet returned
	scratch []byte
	left    int64 // bytes not yet returned
}

// Close does nothing: the body's parts are the conversation's.
func (r *bodyReader) Close() error { return nil }

func (r *bodyReader) Read(p []byte) (int, error) {
	n, err := r.read(p)
	r.left -= int64(n)
	return n, err
}

func (r *bodyReader) read(p []byte) (int, error) {
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

// writeTo writes the rest of the body to w: the literal parts (the
// history's cached escaped text among them) straight from where they are,
// in one writev each batch when w is a network connection, with no copy
// into a buffer first; a string held by reference is escaped in chunks
// as it goes.
func (r *bodyReader) writeTo(w io.Writer) (int64, error) {
	var written int64
	vec := make(net.Buffers, 0, min(len(r.parts)-r.i+1, 1024))
	send := func() error {
		if len(vec) == 0 {
			return nil
		}
		bufs := vec
		n, err := bufs.WriteTo(w)
		written += n
		r.left -= n
		vec = vec[:0]
		return err
	}
	if len(r.pending) > 0 {
		vec = append(vec, r.pending)
		r.pending = nil
	}
	for ; r.i < len(r.parts); r.i++ {
		part := &r.parts[r.i]
		if !part.ref {
			if len(part.lit) > 0 {
				vec = append(vec, part.lit)
			}
			if len(vec) == cap(vec) {
				if err := send(); err != nil {
					r.i++
					return written, err
				}
			}
			continue
		}
		if err := send(); err != nil {
			return written, err
		}
		if r.scratch == nil {
			r.scratch = make([]byte, 0, escapeChunk+escapeMaxStep)
		}
		for done := false; !done; {
			var out []byte
			if part.b != nil {
				out, r.off = appendEscaped(r.scratch[:0], part.b, r.off, escapeChunk)
				done = r.off == len(part.b)
			} else {
				out, r.off = appendEscaped(r.scratch[:0], part.s, r.off, escapeChunk)
				done = r.off == len(part.s)
			}
			n, err := w.Write(out)
			written += int64(n)
			r.left -= int64(n)
			if err != nil {
				return written, err
			}
		}
		r.off = 0
	}
	return written, send()
}
