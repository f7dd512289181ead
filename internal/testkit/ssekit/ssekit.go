// Package ssekit is the core of the loopback vendor servers of the test
// kit (internal/testkit/anthropic, responses, gemini): it answers POSTs to
// one route with scripted replies — a stream of server-sent events, an
// error status with the vendor's error body, a dropped connection or a
// stalled stream — and records every request (path and query, headers,
// body) so tests can assert on what the client sent. Each vendor package
// writes its own wire format by hand on top of it.
package ssekit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Event is one server-sent event: an optional event name and its data
// (one line of JSON).
type Event struct {
	Name string
	Data string
}

// Reply is one scripted answer.
type Reply struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Header holds extra response headers (e.g. Retry-After).
	Header http.Header
	// Body, when set, is written as is (an error body, a plain answer)
	// with ContentType (default application/json).
	Body        string
	ContentType string
	// Events are streamed as text/event-stream when Body is empty.
	Events []Event
	// Drop closes the connection without answering.
	Drop bool
	// DropAfter, when > 0, sends that many events and cuts the connection.
	DropAfter int
	// StallAfter, when > 0, sends that many events and then waits until
	// the client goes away.
	StallAfter int
}

// Request is a request the server received.
type Request struct {
	// URI is the path and query.
	URI    string
	Header http.Header
	// Raw is the body; JSON the body decoded.
	Raw  []byte
	JSON map[string]any
}

// Server is a running server; it is closed by t.Cleanup.
type Server struct {
	// URL is the server's root (http://127.0.0.1:port).
	URL string

	t        testing.TB
	name     string
	route    func(path string) bool
	srv      *httptest.Server
	mu       sync.Mutex
	replies  []Reply
	requests []Request
}

// New starts a server named name (for messages) answering POSTs whose path
// route accepts, with replies in order; a request after the last reply
// fails the test.
func New(t testing.TB, name string, route func(path string) bool, replies ...Reply) *Server {
	t.Helper()
	s := &Server{t: t, name: name, route: route, replies: append([]Reply(nil), replies...)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !s.route(r.URL.Path) {
		http.Error(w, fmt.Sprintf(`{"error":{"message":"%s: no route for %s %s"}}`, s.name, r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	req := Request{URI: r.URL.RequestURI(), Header: r.Header.Clone(), Raw: raw}
	if err := json.Unmarshal(raw, &req.JSON); err != nil {
		s.t.Errorf("%s: request body is not JSON: %v", s.name, err)
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	var reply Reply
	ok := n < len(s.replies)
	if ok {
		reply = s.replies[n]
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("%s: request %d has no scripted reply (%d scripted)", s.name, n+1, len(s.replies))
		http.Error(w, "no scripted reply", http.StatusInternalServerError)
		return
	}
	serve(w, r, reply)
}

func serve(w http.ResponseWriter, r *http.Request, reply Reply) {
	if reply.Drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
		return
	}
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	if reply.Body != "" {
		ct := reply.ContentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	for i, ev := range reply.Events {
		if reply.DropAfter > 0 && i == reply.DropAfter {
			panic(http.ErrAbortHandler)
		}
		if reply.StallAfter > 0 && i == reply.StallAfter {
			<-r.Context().Done()
			return
		}
		if _, err := io.WriteString(w, Format(ev)); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// Format returns an event as it goes on the wire.
func Format(ev Event) string {
	var b strings.Builder
	if ev.Name != "" {
		b.WriteString("event: " + ev.Name + "\n")
	}
	b.WriteString("data: " + ev.Data + "\n\n")
	return b.String()
}

// JSON returns v encoded; it panics on a value encoding/json refuses.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Split cuts s into n pieces of about equal length (at byte boundaries
// that keep UTF-8 whole); n < 2 gives s.
func Split(s string, n int) []string {
	if n < 2 || len(s) < 2 {
		return []string{s}
	}
	size := (len(s) + n - 1) / n
	var out []string
	for len(s) > 0 {
		k := min(size, len(s))
		for k < len(s) && s[k]&0xC0 == 0x80 {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}
