// Package gemini is a loopback Gemini API server for tests
// (POST /v1beta/models/{model}:streamGenerateContent?alt=sse): it streams
// scripted replies as the API documents them — each server-sent event a
// GenerateContentResponse whose candidate holds some parts (thought parts
// with "thought": true, text, a whole functionCall; thoughtSignature on a
// part), the last with finishReason and usageMetadata — answers error
// statuses with Google's error body ({"error":{"code","message",
// "status"}}), and records the requests. The wire format is written out by
// hand.
package gemini

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/ssekit"
)

// Part is one part of a reply.
type Part struct {
	// Text is a text or thought part's text.
	Text string
	// Thought marks a thought summary.
	Thought bool
	// Signature is the part's thoughtSignature (sent on its first piece).
	Signature string
	// Call, when set, makes a functionCall part: Args is JSON text.
	Call *Call
}

// Call is a function call.
type Call struct {
	ID, Name, Args string
}

// Usage is the usageMetadata of the last event.
type Usage struct {
	Prompt, Candidates, Thoughts, Cached int
}

// Reply is one scripted answer.
type Reply struct {
	Parts []Part
	// Chunks is how many events each text is split into (default 1).
	Chunks int
	// FinishReason defaults to STOP.
	FinishReason string
	Usage        Usage
	// Status with ErrorMessage and ErrorStatus answers with an error body.
	Status       int
	ErrorStatus  string
	ErrorMessage string
	Header       http.Header
	// StallAfter, DropAfter: as ssekit.Reply.
	StallAfter, DropAfter int
}

// Server is a running server; its URL plus "/v1beta" is the base URL.
type Server struct {
	*ssekit.Server
}

// NewServer starts a server answering with replies in order.
func NewServer(t testing.TB, replies ...Reply) *Server {
	s := &Server{ssekit.New(t, "testkit/gemini", func(p string) bool {
		return strings.HasPrefix(p, "/v1beta/models/") && strings.HasSuffix(p, ":streamGenerateContent")
	})}
	s.Add(replies...)
	return s
}

// Add appends replies.
func (s *Server) Add(replies ...Reply) {
	for _, r := range replies {
		s.Server.Add(Wire(r))
	}
}

var statuses = map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
	404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}

// Wire returns the reply as the server sends it.
func Wire(r Reply) ssekit.Reply {
	if r.Status >= 400 {
		st := r.ErrorStatus
		if st == "" {
			st = statuses[r.Status]
		}
		msg := r.ErrorMessage
		if msg == "" {
			msg = http.StatusText(r.Status)
		}
		return ssekit.Reply{Status: r.Status, Header: r.Header,
			Body: ssekit.JSON(map[string]any{"error": map[string]any{"code": r.Status, "message": msg, "status": st}})}
	}
	return ssekit.Reply{Header: r.Header, Events: Events(r), StallAfter: r.StallAfter, DropAfter: r.DropAfter}
}

// Events returns the events of a streamed reply.
func Events(r Reply) []ssekit.Event {
	var parts [][]map[string]any
	for _, p := range r.Parts {
		if p.Call != nil {
			fc := map[string]any{"name": p.Call.Name, "args": rawJSON(p.Call.Args)}
			if p.Call.ID != "" {
				fc["id"] = p.Call.ID
			}
			part := map[string]any{"functionCall": fc}
			if p.Signature != "" {
				part["thoughtSignature"] = p.Signature
			}
			parts = append(parts, []map[string]any{part})
			continue
		}
		for i, s := range ssekit.Split(p.Text, r.Chunks) {
			part := map[string]any{"text": s}
			if p.Thought {
				part["thought"] = true
			}
			if i == 0 && p.Signature != "" {
				part["thoughtSignature"] = p.Signature
			}
			parts = append(parts, []map[string]any{part})
		}
	}
	if len(parts) == 0 {
		parts = append(parts, []map[string]any{{"text": ""}})
	}
	var out []ssekit.Event
	for i, ps := range parts {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": ps}, "index": 0}
		chunk := map[string]any{"candidates": []any{cand}, "modelVersion": "gemini-test", "responseId": "resp-1"}
		if i == len(parts)-1 {
			fr := r.FinishReason
			if fr == "" {
				fr = "STOP"
			}
			cand["finishReason"] = fr
			u := r.Usage
			chunk["usageMetadata"] = map[string]any{"promptTokenCount": u.Prompt, "candidatesTokenCount": u.Candidates,
				"thoughtsTokenCount": u.Thoughts, "cachedContentTokenCount": u.Cached, "totalTokenCount": u.Prompt + u.Candidates + u.Thoughts}
		}
		out = append(out, ssekit.Event{Data: ssekit.JSON(chunk)})
	}
	return out
}

type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) {
	if r == "" {
		return []byte(`{}`), nil
	}
	return []byte(r), nil
}
