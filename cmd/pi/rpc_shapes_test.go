package main

import (
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
)

// get_last_assistant_text answers as the reference does: data without a
// "text" field before any answer (the reference's undefined, not null),
// then the last answer's text, trimmed.
func TestRPCLastAssistantText(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Text: "\n  test123  \n"})
	p := startRPC(t, "", "--no-session", "--base-url", srv.URL, "--model", "m", "--cwd", t.TempDir())
	p.send(`{"id":"1","type":"get_last_assistant_text"}`)
	r := p.response("1")
	data, ok := r["data"].(map[string]any)
	if r["success"] != true || !ok {
		t.Fatalf("before any answer: %v", r)
	}
	if text, has := data["text"]; has {
		t.Fatalf("before any answer, text is %#v; want no text field", text)
	}
	p.send(`{"id":"2","type":"prompt","message":"Reply with just: test123"}`)
	p.response("2")
	p.expect("agent_end", isType("agent_end"))
	p.send(`{"id":"3","type":"get_last_assistant_text"}`)
	if got := p.response("3")["data"].(map[string]any)["text"]; got != "test123" {
		t.Fatalf("text %#v, want \"test123\"", got)
	}
}

// clone before the session's first entry is refused in the reference's
// words; after an answer it starts a new session holding the conversation.
func TestRPCCloneEmpty(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Text: "hi"})
	p := startRPC(t, "", "--no-session", "--base-url", srv.URL, "--model", "m", "--cwd", t.TempDir())
	p.send(`{"id":"1","type":"clone"}`)
	if r := p.response("1"); r["success"] != false || r["error"] != "Cannot clone session: no current entry selected" {
		t.Fatalf("clone of an empty session: %v", r)
	}
	p.send(`{"id":"2","type":"get_state"}`)
	before := p.response("2")["data"].(map[string]any)["sessionId"]
	p.send(`{"id":"3","type":"prompt","message":"hello"}`)
	p.response("3")
	p.expect("agent_end", isType("agent_end"))
	p.send(`{"id":"4","type":"clone"}`)
	if r := p.response("4"); r["success"] != true {
		t.Fatalf("clone: %v", r)
	}
	p.send(`{"id":"5","type":"get_state"}`)
	st := p.response("5")["data"].(map[string]any)
	if st["sessionId"] == before || st["messageCount"] != 2.0 {
		t.Fatalf("after clone: %v", st)
	}
}

// fork with an entry that is no user message of the current branch is
// refused in the reference's words, and the session stays.
func TestRPCForkInvalidEntry(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Text: "hi"})
	p := startRPC(t, "", "--no-session", "--base-url", srv.URL, "--model", "m", "--cwd", t.TempDir())
	p.send(`{"id":"1","type":"prompt","message":"hello"}`)
	p.response("1")
	p.expect("agent_end", isType("agent_end"))
	p.send(`{"id":"2","type":"get_state"}`)
	before := p.response("2")["data"].(map[string]any)["sessionId"]
	p.send(`{"id":"3","type":"fork","entryId":"nosuch"}`)
	r := p.response("3")
	if msg, _ := r["error"].(string); r["success"] != false || !strings.HasPrefix(msg, "Invalid entry ID for forking: ") || !strings.Contains(msg, "nosuch") {
		t.Fatalf("fork of no entry: %v", r)
	}
	p.send(`{"id":"4","type":"get_state"}`)
	if after := p.response("4")["data"].(map[string]any)["sessionId"]; after != before {
		t.Fatalf("a refused fork changed the session: %v → %v", before, after)
	}
}
