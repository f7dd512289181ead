// Package responses is a loopback OpenAI Responses API server for tests
// (POST /v1/responses): it streams scripted replies as the API documents
// its server-sent events — response.created, then per output item
// response.output_item.added, its deltas (reasoning_summary_part.added /
// reasoning_summary_text.delta, content_part.added / output_text.delta,
// function_call_arguments.delta) and response.output_item.done with the
// whole item (a reasoning item with its encrypted_content), and
// response.completed with the usage — answers error statuses with
// OpenAI's error body, and records the requests. The wire format is
// written out by hand, not with the SDK's types.
package responses

import (
	"net/http"
	"testing"

	"github.com/pi-go/pi/internal/testkit/ssekit"
)

// Item is one output item of a reply.
type Item struct {
	// Type is reasoning, message or function_call.
	Type string
	// ID is the item id (default rs_<n>, msg_<n>, fc_<n>).
	ID string
	// Summary are a reasoning item's summary parts; EncryptedContent its
	// encrypted reasoning.
	Summary          []string
	EncryptedContent string
	// Text is a message's text.
	Text string
	// CallID, Name and Arguments are a function call's.
	CallID, Name, Arguments string
}

// Usage is what response.completed reports.
type Usage struct {
	Input, Cached, Output, Reasoning int
}

// Reply is one scripted answer.
type Reply struct {
	Items []Item
	// Chunks is how many deltas each text is split into (default 1).
	Chunks int
	Usage  Usage
	// Final is the final event: completed (default), incomplete or failed.
	Final string
	// Status with ErrorMessage answers with an error body.
	Status       int
	ErrorMessage string
	Header       http.Header
	// StallAfter, DropAfter: as ssekit.Reply.
	StallAfter, DropAfter int
}

// Server is a running server; its URL plus "/v1" is the base URL.
type Server struct {
	*ssekit.Server
}

// NewServer starts a server answering with replies in order.
func NewServer(t testing.TB, replies ...Reply) *Server {
	s := &Server{ssekit.New(t, "testkit/responses", func(p string) bool { return p == "/v1/responses" })}
	s.Add(replies...)
	return s
}

// Add appends replies.
func (s *Server) Add(replies ...Reply) {
	for _, r := range replies {
		s.Server.Add(Wire(r))
	}
}

// Wire returns the reply as the server sends it.
func Wire(r Reply) ssekit.Reply {
	if r.Status >= 400 {
		msg := r.ErrorMessage
		if msg == "" {
			msg = http.StatusText(r.Status)
		}
		return ssekit.Reply{Status: r.Status, Header: r.Header,
			Body: ssekit.JSON(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})}
	}
	return ssekit.Reply{Header: r.Header, Events: Events(r), StallAfter: r.StallAfter, DropAfter: r.DropAfter}
}

// Events returns the events of a streamed reply.
func Events(r Reply) []ssekit.Event {
	seq := 0
	var out []ssekit.Event
	ev := func(typ string, data map[string]any) {
		data["type"] = typ
		data["sequence_number"] = seq
		seq++
		out = append(out, ssekit.Event{Name: typ, Data: ssekit.JSON(data)})
	}
	ev("response.created", map[string]any{"response": map[string]any{"id": "resp_test", "object": "response", "status": "in_progress", "model": "gpt-test", "output": []any{}}})
	var done []any
	for i, it := range r.Items {
		var item map[string]any
		switch it.Type {
		case "reasoning":
			id := or(it.ID, "rs_"+itoa(i))
			ev("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"id": id, "type": "reasoning", "summary": []any{}}})
			var summary []any
			for k, s := range it.Summary {
				ev("response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": i, "summary_index": k, "part": map[string]any{"type": "summary_text", "text": ""}})
				for _, p := range ssekit.Split(s, r.Chunks) {
					ev("response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": i, "summary_index": k, "delta": p})
				}
				ev("response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": i, "summary_index": k, "text": s})
				ev("response.reasoning_summary_part.done", map[string]any{"item_id": id, "output_index": i, "summary_index": k, "part": map[string]any{"type": "summary_text", "text": s}})
				summary = append(summary, map[string]any{"type": "summary_text", "text": s})
			}
			item = map[string]any{"id": id, "type": "reasoning", "summary": summary, "encrypted_content": it.EncryptedContent}
		case "message":
			id := or(it.ID, "msg_"+itoa(i))
			ev("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
			ev("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, p := range ssekit.Split(it.Text, r.Chunks) {
				ev("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": p})
			}
			ev("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": it.Text})
			part := map[string]any{"type": "output_text", "text": it.Text, "annotations": []any{}}
			ev("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "part": part})
			item = map[string]any{"id": id, "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
		case "function_call":
			id := or(it.ID, "fc_"+itoa(i))
			ev("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": it.CallID, "name": it.Name, "arguments": ""}})
			for _, p := range ssekit.Split(it.Arguments, r.Chunks) {
				ev("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": p})
			}
			ev("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "arguments": it.Arguments})
			item = map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": it.CallID, "name": it.Name, "arguments": it.Arguments}
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": item})
		done = append(done, item)
	}
	final := or(r.Final, "completed")
	resp := map[string]any{"id": "resp_test", "object": "response", "status": final, "model": "gpt-test", "output": done,
		"usage": map[string]any{
			"input_tokens": r.Usage.Input + r.Usage.Cached, "input_tokens_details": map[string]any{"cached_tokens": r.Usage.Cached},
			"output_tokens": r.Usage.Output, "output_tokens_details": map[string]any{"reasoning_tokens": r.Usage.Reasoning},
			"total_tokens": r.Usage.Input + r.Usage.Cached + r.Usage.Output,
		}}
	if final == "failed" {
		resp["error"] = map[string]any{"code": "server_error", "message": "The model failed"}
	}
	ev("response."+final, map[string]any{"response": resp})
	return out
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
