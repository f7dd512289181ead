package llm

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// longBodies are the bodies of longConversation's last turn written with
// the escape cache (the history as cached text, a string past cacheMax
// by reference) and without it (every string past inlineMax by
// reference).
func longBodies(t *testing.T) map[string]*requestBody {
	t.Helper()
	req := Request{SystemPrompt: "You are pi.", Messages: longConversation(9)}
	bodies := map[string]*requestBody{}
	for name, cache := range map[string]*escapeCache{"cached": newEscapeCache(), "plain": nil} {
		b, err := wireRequestFor(req, wireOptions{model: "m", images: true, escapes: cache})
		if err != nil {
			t.Fatal(err)
		}
		bodies[name] = b
	}
	return bodies
}

// TestBodyWriteTo: a body written out by writeTo after any number of
// bytes were read is the rest of the body, byte for byte, whether the
// read stopped in a literal part or in the middle of a string escaped by
// reference.
func TestBodyWriteTo(t *testing.T) {
	for name, b := range longBodies(t) {
		whole := readWhole(t, b)
		for _, first := range []int{0, 1, 100, 4000, 4096, 40 << 10, 1 << 20, len(whole) / 2, len(whole) - 1, len(whole)} {
			r := b.reader().(*bodyReader)
			head := make([]byte, first)
			if _, err := io.ReadFull(r, head); err != nil {
				t.Fatal(err)
			}
			var rest bytes.Buffer
			n, err := r.writeTo(&rest)
			if err != nil {
				t.Fatal(err)
			}
			got := append(head, rest.Bytes()...)
			if n != int64(rest.Len()) || r.left != 0 || !bytes.Equal(got, whole) {
				t.Fatalf("%s, %d bytes read first: writeTo wrote %d (%d left), body equal: %v", name, first, n, r.left, bytes.Equal(got, whole))
			}
		}
	}
}

// TestBodyConnSendsTheBody: a request sent through the providers' shared
// transport to a real loopback server arrives as the body was written,
// sent by bodyConn's writev path (not net/http's copy).
func TestBodyConnSendsTheBody(t *testing.T) {
	got := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		got <- data
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	tr := newTransport(srv.URL, "m", "", "", nil, -1, nil)
	for name, b := range longBodies(t) {
		before := bodyWrites.Load()
		res, err := tr.post(context.Background(), srv.URL, b, http.Header{})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if data := <-got; !bytes.Equal(data, readWhole(t, b)) {
			t.Fatalf("%s: the server received %d bytes, not the body's %d", name, len(data), b.size)
		}
		if bodyWrites.Load() != before+1 {
			t.Fatalf("%s: the body was not written by bodyConn", name)
		}
	}
}
