// Package openai owns a local OpenAI-compatible chat completions server
// for tests: it answers POST /v1/chat/completions with scripted replies
// (streamed SSE chunks, a plain JSON completion, an error status, a raw body,
// a dropped connection or a stalled stream) and records the JSON bodies it
// received so tests can assert on what the client sent.
//
// It speaks the wire format written out by hand (no client library types), so
// it checks a client against the format rather than against itself.
package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"unicode/utf8"
)

// ToolCall is a tool call the scripted model makes.
type ToolCall struct {
	// ID is the call id; empty means "call_<n>" with n counting the reply's
	// calls from 1.
	ID   string
	Name string
	// Arguments is the raw argument text (usually a JSON object).
	Arguments string
}

// Usage is the token usage a reply reports.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	// CachedTokens, when set, is sent as prompt_tokens_details.cached_tokens
	// (counted in PromptTokens, as OpenAI counts them).
	CachedTokens int
}

// Reply is one scripted answer to one request. The zero Reply is a streamed
// empty assistant message with finish_reason "stop".
type Reply struct {
	// Status is the HTTP status; 0 means 200. With a status >= 400 and no
	// Body, the body is an OpenAI error object with ErrorMessage.
	Status int
	// Header holds extra response headers (e.g. Retry-After).
	Header http.Header
	// Body, when set, is written as-is with ContentType (default
	// "text/event-stream" for status 200, else "application/json").
	Body        string
	ContentType string
	// ErrorMessage is the message of the error object of an error status.
	ErrorMessage string

	// Text is the assistant's text.
	Text string
	// Reasoning is the model's reasoning, streamed before the text in the
	// delta member ReasoningField (default "reasoning_content", as
	// DeepSeek and llama.cpp send it; vLLM and OpenRouter send
	// "reasoning").
	Reasoning      string
	ReasoningField string
	// ToolCalls are the calls the assistant makes.
	ToolCalls []ToolCall
	// Chunks is how many pieces Text and each call's Arguments are split into
	// (default 1).
	Chunks int
	// Interleave sends the argument pieces of all calls round-robin (call 0
	// piece 1, call 1 piece 1, call 0 piece 2, ...) instead of call by call.
	Interleave bool
	// FinishReason defaults to "tool_calls" with tool calls, else "stop".
	FinishReason string
	// Usage, when set, is sent in a final chunk with empty choices (or in the
	// completion's usage field when NotStreamed).
	Usage *Usage
	// NotStreamed answers with a plain JSON chat.completion object
	// (Content-Type application/json) even when the request asked to stream.
	NotStreamed bool

	// Drop closes the connection without answering (a connection reset).
	Drop bool
	// DropAfter, when > 0, sends that many SSE events and then cuts the
	// connection in the middle of the stream.
	DropAfter int
	// StallAfter, when > 0, sends that many SSE events and then waits until
	// the client goes away, without finishing the stream.
	StallAfter int
}

// Server is a running test server. Close is registered with t.Cleanup.
type Server struct {
	// URL is the base URL, ending in /v1.
	URL string

	t       testing.TB
	srv     *httptest.Server
	mu      sync.Mutex
	replies []Reply
	bodies  []map[string]any
	raw     [][]byte
	headers []http.Header
	uris    []string
	// forget: keep no request bodies (ForgetBodies).
	forget bool
}

// ForgetBodies makes the server keep no request body (Requests and
// RawRequests then return none): a benchmark that sends a 20 MB tool call
// back in every request measures the client, not the server's copies.
func (s *Server) ForgetBodies() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget = true
}

// NewServer starts a server on loopback that answers requests with replies in
// order. A request after the last reply fails the test and gets a 500.
func NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{t: t, replies: append([]Reply(nil), replies...)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.srv.Close)
	return s
}

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the decoded JSON bodies of the requests received so far.
func (s *Server) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.bodies...)
}

// RawRequests returns the raw bodies of the requests received so far.
func (s *Server) RawRequests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.raw...)
}

// Headers returns the headers of the requests received so far.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// RequestURIs returns the path and query of the requests received so far.
func (s *Server) RequestURIs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.uris...)
}

// Close stops the server (also done by t.Cleanup).
func (s *Server) Close() { s.srv.Close() }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, fmt.Sprintf("testkit/openai: no route for %s %s", r.Method, r.URL.Path))
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "testkit/openai: read body: "+err.Error())
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		s.t.Errorf("testkit/openai: request body is not JSON: %v", err)
		writeError(w, http.StatusBadRequest, "testkit/openai: request body is not JSON: "+err.Error())
		return
	}
	stream, _ := body["stream"].(bool)
	s.mu.Lock()
	n := len(s.headers)
	if !s.forget {
		s.bodies = append(s.bodies, body)
		s.raw = append(s.raw, raw)
	}
	s.headers = append(s.headers, r.Header.Clone())
	s.uris = append(s.uris, r.URL.RequestURI())
	var reply Reply
	ok := n < len(s.replies)
	if ok {
		reply = s.replies[n]
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("testkit/openai: request %d has no scripted reply (%d scripted)", n+1, len(s.replies))
		writeError(w, http.StatusInternalServerError, "testkit/openai: no scripted reply")
		return
	}
	s.serve(w, r, reply, stream)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, reply Reply, stream bool) {
	if reply.Drop {
		hj, ok := w.(http.Hijacker)
		if !ok {
			s.t.Errorf("testkit/openai: cannot hijack the connection")
			return
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			conn.Close()
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
			if status == http.StatusOK {
				ct = "text/event-stream"
			}
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(reply.Body))
		return
	}
	if status >= 400 {
		msg := reply.ErrorMessage
		if msg == "" {
			msg = http.StatusText(status)
		}
		writeError(w, status, msg)
		return
	}
	if reply.NotStreamed || !stream {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(Completion(reply))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	for i, ev := range Chunks(reply) {
		if reply.DropAfter > 0 && i == reply.DropAfter {
			// Aborts the response: the server closes the connection
			// without ending the chunked body.
			panic(http.ErrAbortHandler)
		}
		if reply.StallAfter > 0 && i == reply.StallAfter {
			<-r.Context().Done()
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", ev); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// Chunks returns the SSE data payloads (without the "data: " prefix) a
// streamed reply sends, ending with "[DONE]".
func Chunks(reply Reply) []string {
	var out []string
	add := func(delta map[string]any, finish any) {
		out = append(out, mustJSON(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "test",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}))
	}
	add(map[string]any{"role": "assistant", "content": ""}, nil)
	field := reply.ReasoningField
	if field == "" {
		field = "reasoning_content"
	}
	if reply.Reasoning != "" {
		for _, piece := range split(reply.Reasoning, reply.Chunks) {
			add(map[string]any{"content": nil, field: piece}, nil)
		}
	}
	for _, piece := range split(reply.Text, reply.Chunks) {
		add(map[string]any{"content": piece}, nil)
	}
	calls := withIDs(reply.ToolCalls)
	pieces := make([][]string, len(calls))
	for i, c := range calls {
		pieces[i] = split(c.Arguments, reply.Chunks)
	}
	callDelta := func(i int, first bool, args string) map[string]any {
		tc := map[string]any{"index": i, "function": map[string]any{"arguments": args}}
		if first {
			tc["id"] = calls[i].ID
			tc["type"] = "function"
			tc["function"] = map[string]any{"name": calls[i].Name, "arguments": args}
		}
		return map[string]any{"tool_calls": []any{tc}}
	}
	if reply.Interleave {
		for i := range calls {
			first := ""
			if len(pieces[i]) > 0 {
				first, pieces[i] = pieces[i][0], pieces[i][1:]
			}
			add(callDelta(i, true, first), nil)
		}
		for more := true; more; {
			more = false
			for i := range calls {
				if len(pieces[i]) > 0 {
					add(callDelta(i, false, pieces[i][0]), nil)
					pieces[i] = pieces[i][1:]
					more = true
				}
			}
		}
	} else {
		for i := range calls {
			add(callDelta(i, true, ""), nil)
			for _, p := range pieces[i] {
				add(callDelta(i, false, p), nil)
			}
		}
	}
	add(map[string]any{}, finishReason(reply))
	if reply.Usage != nil {
		out = append(out, mustJSON(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "test",
			"choices": []any{}, "usage": usageJSON(*reply.Usage),
		}))
	}
	return append(out, "[DONE]")
}

// Completion returns the plain (not streamed) chat.completion object of a
// reply.
func Completion(reply Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	if reply.Text == "" && len(reply.ToolCalls) > 0 {
		msg["content"] = nil
	}
	if calls := withIDs(reply.ToolCalls); len(calls) > 0 {
		var tcs []any
		for _, c := range calls {
			tcs = append(tcs, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
		}
		msg["tool_calls"] = tcs
	}
	out := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": "test",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finishReason(reply)}},
	}
	if reply.Usage != nil {
		out["usage"] = usageJSON(*reply.Usage)
	}
	return out
}

func finishReason(r Reply) string {
	if r.FinishReason != "" {
		return r.FinishReason
	}
	if len(r.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func usageJSON(u Usage) map[string]any {
	m := map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
	if u.CachedTokens > 0 {
		m["prompt_tokens_details"] = map[string]any{"cached_tokens": u.CachedTokens}
	}
	return m
}

func withIDs(calls []ToolCall) []ToolCall {
	out := append([]ToolCall(nil), calls...)
	for i := range out {
		if out[i].ID == "" {
			out[i].ID = fmt.Sprintf("call_%d", i+1)
		}
	}
	return out
}

// split cuts s into n pieces of roughly equal size on rune boundaries (fewer
// when s is short); an empty s gives no pieces.
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n < 1 {
		n = 1
	}
	size := (utf8.RuneCountInString(s) + n - 1) / n
	var out []string
	start, count := 0, 0
	for i := range s {
		if count == size {
			out = append(out, s[start:i])
			start, count = i, 0
		}
		count++
	}
	return append(out, s[start:])
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("testkit/openai: marshal: %v", err))
	}
	return string(b)
}
