// Package waitbuf is the buffer tests give to what writes from several
// goroutines (a terminal's screen, a stderr, a host's log): safe for
// concurrent use, and each write wakes whoever waits for some text to
// appear, so a test orders itself on what was written, never on a sleep.
// It is imported only by tests and the test kits (internal/testkit/plugin,
// runtime/app/pitest).
package waitbuf

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer collects writes; it is safe for concurrent use.
type Buffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

// New returns an empty Buffer.
func New() *Buffer { return &Buffer{changed: make(chan struct{})} }

// Write appends p and wakes the waiters.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	close(b.changed)
	b.changed = make(chan struct{})
	return len(p), nil
}

// String is everything written so far.
func (b *Buffer) String() string {
	text, _ := b.Snapshot()
	return text
}

// Snapshot is everything written so far and a channel closed at the next
// write.
func (b *Buffer) Snapshot() (string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String(), b.changed
}

// WaitFor waits until view of what was written holds want count times (at
// least), and returns that view; after timeout it fails the test with the
// view's last 3000 bytes. view may be nil (the text as written).
func (b *Buffer) WaitFor(t testing.TB, view func(string) string, want string, count int, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		text, changed := b.Snapshot()
		if view != nil {
			text = view(text)
		}
		if strings.Count(text, want) >= count {
			return text
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%q (%d times) was not written within %s; the end of what was:\n%s", want, count, timeout, Tail(text, 3000))
		}
	}
}

// Tail is the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
