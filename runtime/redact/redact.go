// Package redact owns the one rule for hiding a secret (the model's API key)
// in what pi writes out: tool results, events, logs, error messages and the
// bash tool's full-output files. It never touches what the model said or
// what a tool receives; callers apply it to outputs only.
//
// The rule: a secret shorter than MinLen bytes is not a secret (keys such as
// "test" or "ollama" would otherwise turn every "a.txt" into
// "a.t[REDACTED]t") and is never replaced. A longer secret is replaced by
// Mark wherever it appears, in its raw form and in its JSON-escaped form.
//
// It imports only the standard library, so every layer (the provider, the
// built-in tools, the CLI) can share it.
package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
)

// Mark replaces a secret.
const Mark = "[REDACTED]"

// MinLen is the shortest value treated as a secret, in bytes.
const MinLen = 12

// IsSecret reports whether s is long enough to be treated as a secret.
func IsSecret(s string) bool { return len(s) >= MinLen }

// Redactor replaces secrets in text. The zero value and nil redact nothing.
// It is immutable and safe for concurrent use.
type Redactor struct {
	// needles are the forms searched for, longest first.
	needles []string
}

// New returns a Redactor for the given secrets. Values shorter than MinLen
// (and empty ones) are left out: see IsSecret.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if !IsSecret(s) {
			continue
		}
		r.add(s)
		if b, err := json.Marshal(s); err == nil {
			// The form the secret takes inside a JSON string (events,
			// arguments): quotes, backslashes, <, > and & are escaped.
			r.add(string(b[1 : len(b)-1]))
		}
	}
	slices.SortStableFunc(r.needles, func(a, b string) int { return len(b) - len(a) })
	return r
}

func (r *Redactor) add(s string) {
	if !slices.Contains(r.needles, s) {
		r.needles = append(r.needles, s)
	}
}

// Active reports whether r has any secret to redact.
func (r *Redactor) Active() bool { return r != nil && len(r.needles) > 0 }

// Contains reports whether s holds a secret.
func (r *Redactor) Contains(s string) bool {
	if r == nil {
		return false
	}
	for _, n := range r.needles {
		if strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// ContainsBytes is Contains for bytes, without copying them to a string.
func (r *Redactor) ContainsBytes(b []byte) bool {
	if r == nil {
		return false
	}
	for _, n := range r.needles {
		if bytes.Contains(b, []byte(n)) {
			return true
		}
	}
	return false
}

// String returns s with every secret replaced by Mark.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	for _, n := range r.needles {
		if strings.Contains(s, n) {
			s = strings.ReplaceAll(s, n, Mark)
		}
	}
	return s
}

// Bytes returns b with every secret replaced by Mark; b itself is returned
// when it holds none.
func (r *Redactor) Bytes(b []byte) []byte {
	if !r.Active() || !r.ContainsBytes(b) {
		return b
	}
	return []byte(r.String(string(b)))
}

// Writer returns a writer that redacts each write before passing it on to
// w. Each write is redacted on its own: it suits writers that receive whole
// lines or messages (a logger, an error printer); use Stream for a byte
// stream that may split a secret between writes.
func (r *Redactor) Writer(w io.Writer) io.Writer { return &writer{w: w, r: r} }

type writer struct {
	w io.Writer
	r *Redactor
}

func (w *writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.r.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// holdback returns how many bytes at the end of s could be the start of a
// secret, so a stream must keep them until more arrives.
func (r *Redactor) holdback(s string) int {
	if r == nil {
		return 0
	}
	best := 0
	for _, n := range r.needles {
		for k := min(len(s), len(n)-1); k > best; k-- {
			if strings.HasSuffix(s, n[:k]) {
				best = k
				break
			}
		}
	}
	return best
}

// Stream redacts text that arrives in pieces, even when a secret is split
// across pieces: it holds back the longest tail that could be the start of a
// secret until more arrives or Flush. Text that cannot start a secret goes
// out at once. A Stream is not safe for concurrent use.
type Stream struct {
	r       *Redactor
	pending string
}

// Stream returns a new Stream that redacts with r.
func (r *Redactor) Stream() *Stream { return &Stream{r: r} }

// Write adds s and returns what can be let out now.
func (s *Stream) Write(p string) string {
	if !s.r.Active() {
		return p
	}
	buf := s.r.String(s.pending + p)
	cut := len(buf) - s.r.holdback(buf)
	s.pending = buf[cut:]
	return buf[:cut]
}

// Flush returns what the stream still holds and empties it.
func (s *Stream) Flush() string {
	out := s.pending
	s.pending = ""
	return out
}
