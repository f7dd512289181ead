// Package anthropic is a loopback Anthropic Messages API server for tests
// (POST /v1/messages): it streams scripted replies as the API documents
// its server-sent events — message_start, content_block_start /
// content_block_delta (text_delta, thinking_delta, signature_delta,
// input_json_delta) / content_block_stop for each block, ping,
// message_delta with the stop reason and usage, message_stop — answers
// error statuses with Anthropic's error body ({"type":"error","error":
// {"type","message"}}), and records the requests. The wire format is
// written out by hand, not with the SDK's types.
package anthropic

import (
	"net/http"
	"testing"

	"github.com/pi-go/pi/internal/testkit/ssekit"
)

// Block is one content block of a reply.
type Block struct {
	// Type is text, thinking, redacted_thinking or tool_use.
	Type string
	// Text is a text block's text or a thinking block's thinking.
	Text string
	// Signature is a thinking block's signature (sent in a
	// signature_delta).
	Signature string
	// Data is a redacted_thinking block's encrypted data.
	Data string
	// ID, Name and Input are a tool_use block's (Input is JSON text, sent
	// in input_json_delta pieces).
	ID, Name, Input string
}

// Usage is the usage a reply reports: input and cache tokens in
// message_start, output tokens in message_delta.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int
}

// Reply is one scripted answer.
type Reply struct {
	Blocks []Block
	// Chunks is how many deltas each text, thinking and input is split
	// into (default 1).
	Chunks int
	// StopReason defaults to tool_use with a tool_use block, else end_turn.
	StopReason string
	Usage      Usage
	// Status, with ErrorType and ErrorMessage, answers with an error body
	// (ErrorType defaults by status: rate_limit_error for 429,
	// overloaded_error for 529, ...).
	Status       int
	ErrorType    string
	ErrorMessage string
	Header       http.Header
	// StreamError ends the stream with an error event of that type after
	// the blocks (before message_delta).
	StreamError string
	// StallAfter, DropAfter: as ssekit.Reply.
	StallAfter, DropAfter int
}

// Server is a running server.
type Server struct {
	*ssekit.Server
}

// NewServer starts a server answering with replies in order. Its URL is
// the API root (the models.json baseUrl: requests go to URL/v1/messages).
func NewServer(t testing.TB, replies ...Reply) *Server {
	s := &Server{ssekit.New(t, "testkit/anthropic", func(p string) bool { return p == "/v1/messages" })}
	s.Add(replies...)
	return s
}

// Add appends replies.
func (s *Server) Add(replies ...Reply) {
	for _, r := range replies {
		s.Server.Add(Wire(r))
	}
}

// errorTypes are the documented error types by status.
var errorTypes = map[int]string{
	400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
	404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
	500: "api_error", 529: "overloaded_error",
}

// Wire returns the reply as the server sends it.
func Wire(r Reply) ssekit.Reply {
	if r.Status >= 400 {
		typ := r.ErrorType
		if typ == "" {
			typ = errorTypes[r.Status]
		}
		if typ == "" {
			typ = "api_error"
		}
		msg := r.ErrorMessage
		if msg == "" {
			msg = http.StatusText(r.Status)
		}
		return ssekit.Reply{Status: r.Status, Header: r.Header,
			Body: ssekit.JSON(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})}
	}
	return ssekit.Reply{Header: r.Header, Events: Events(r), StallAfter: r.StallAfter, DropAfter: r.DropAfter}
}

// Events returns the events of a streamed reply.
func Events(r Reply) []ssekit.Event {
	ev := func(name string, data map[string]any) ssekit.Event {
		data["type"] = name
		return ssekit.Event{Name: name, Data: ssekit.JSON(data)}
	}
	out := []ssekit.Event{ev("message_start", map[string]any{"message": map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "content": []any{},
		"model": "claude-test", "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": r.Usage.Input, "output_tokens": 1,
			"cache_creation_input_tokens": r.Usage.CacheWrite, "cache_read_input_tokens": r.Usage.CacheRead},
	}})}
	stop := "end_turn"
	for i, b := range r.Blocks {
		delta := func(d map[string]any) {
			out = append(out, ev("content_block_delta", map[string]any{"index": i, "delta": d}))
		}
		switch b.Type {
		case "text":
			out = append(out, ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}}))
			for _, p := range ssekit.Split(b.Text, r.Chunks) {
				delta(map[string]any{"type": "text_delta", "text": p})
			}
		case "thinking":
			out = append(out, ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}}))
			for _, p := range ssekit.Split(b.Text, r.Chunks) {
				delta(map[string]any{"type": "thinking_delta", "thinking": p})
			}
			delta(map[string]any{"type": "signature_delta", "signature": b.Signature})
		case "redacted_thinking":
			out = append(out, ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "redacted_thinking", "data": b.Data}}))
		case "tool_use":
			stop = "tool_use"
			out = append(out, ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}}))
			for _, p := range ssekit.Split(b.Input, r.Chunks) {
				delta(map[string]any{"type": "input_json_delta", "partial_json": p})
			}
		}
		out = append(out, ev("content_block_stop", map[string]any{"index": i}))
		if i == 0 {
			out = append(out, ev("ping", map[string]any{}))
		}
	}
	if r.StreamError != "" {
		return append(out, ev("error", map[string]any{"error": map[string]any{"type": r.StreamError, "message": "Overloaded"}}))
	}
	if r.StopReason != "" {
		stop = r.StopReason
	}
	out = append(out, ev("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": r.Usage.Output},
	}))
	return append(out, ev("message_stop", map[string]any{}))
}
