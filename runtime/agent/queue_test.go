package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// steerTool calls steer (the test's Steer) while it executes, so the
// message is queued while the batch runs; its result says whether the
// agent took it.
func steerTool(steer func() bool) tool.ToolDefinition {
	return tool.ToolDefinition{
		Name: "work", Description: "Works.", Parameters: json.RawMessage(`{"type":"object"}`),
		Execute: func(ctx context.Context, call tool.Call, _ tool.Context) (tool.Result, error) {
			if steer() {
				return tool.TextResult("worked; steered"), nil
			}
			return tool.TextResult("worked; steer refused"), nil
		},
	}
}

func userTexts(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == llm.RoleUser {
			out = append(out, text(m))
		}
	}
	return out
}

// TestSteerAfterToolBatch: a message queued while tools run is added after
// the batch's results, before the next model turn, and is in the events.
func TestSteerAfterToolBatch(t *testing.T) {
	p := script(
		llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{call("work", `{}`), call("work", `{}`)}},
		llm.ScriptTurn{Text: "done"},
	)
	var a *agent.Agent
	var ev events
	n := 0
	a = agent.New(agent.Config{Provider: p, Sequential: true, OnEvent: ev.on, Tools: wrap(t, steerTool(func() bool {
		n++
		return a.Steer(llm.Message{Content: []tool.ContentBlock{tool.Text("also check the tests " + string(rune('0'+n)))}})
	}))})
	res, err := a.Prompt(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	second := reqs[1].Messages
	// user, assistant (2 calls), 2 results, then the two steered messages.
	if len(second) != 6 || second[3].Role != llm.RoleToolResult || text(second[3]) != "worked; steered" {
		t.Fatalf("second request: %+v", second)
	}
	if got := userTexts(second); len(got) != 3 || got[1] != "also check the tests 1" || got[2] != "also check the tests 2" {
		t.Fatalf("user messages of the second request: %q", got)
	}
	if len(res.Unsent) != 0 || res.Text != "done" {
		t.Fatalf("result: unsent %d, text %q", len(res.Unsent), res.Text)
	}
	var ends []string
	for _, e := range ev.ofType(agent.EventMessageEnd) {
		if e.Message.Role == llm.RoleUser {
			ends = append(ends, text(*e.Message))
		}
	}
	if len(ends) != 3 || ends[2] != "also check the tests 2" {
		t.Fatalf("user message_end events: %q", ends)
	}
	if a.Steer(llm.Message{Content: []tool.ContentBlock{tool.Text("late")}}) {
		t.Fatal("Steer after the run reported true")
	}
}

// TestSteerDuringFinalAnswer: a message queued while the model writes an
// answer without tool calls keeps the run going for one more turn.
func TestSteerDuringFinalAnswer(t *testing.T) {
	p := script(llm.ScriptTurn{Text: "first"}, llm.ScriptTurn{Text: "second"})
	var a *agent.Agent
	steered := 0
	a = agent.New(agent.Config{Provider: p, OnEvent: func(e agent.Event) {
		if e.Type == agent.EventMessageUpdate && steered == 0 {
			steered++
			if !a.Steer(llm.Message{Content: []tool.ContentBlock{tool.Text("and more")}}) {
				t.Error("Steer during the run reported false")
			}
		}
	}})
	res, err := a.Prompt(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "second" || res.Turns != 2 {
		t.Fatalf("text %q after %d turns, want second after 2", res.Text, res.Turns)
	}
	if got := userTexts(p.Requests()[1].Messages); len(got) != 2 || got[1] != "and more" {
		t.Fatalf("user messages of the second request: %q", got)
	}
}

// TestSteerUnsentOnAbort: messages queued when the run is cancelled come
// back in Unsent, not lost and not sent.
func TestSteerUnsentOnAbort(t *testing.T) {
	p := script(llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{call("work", `{}`)}}, llm.ScriptTurn{Text: "never"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var a *agent.Agent
	a = agent.New(agent.Config{Provider: p, Tools: wrap(t, steerTool(func() bool {
		ok := a.Steer(llm.Message{Content: []tool.ContentBlock{tool.Text("queued")}})
		cancel()
		return ok
	}))})
	res, err := a.Prompt(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != llm.StopAborted || len(res.Unsent) != 1 || text(res.Unsent[0]) != "queued" {
		t.Fatalf("stop %s, unsent %+v", res.StopReason, res.Unsent)
	}
	for _, m := range a.Messages() {
		if m.Role == llm.RoleUser && text(m) == "queued" {
			t.Fatal("an unsent message is in the conversation")
		}
	}
	if len(p.Requests()) != 1 {
		t.Fatalf("%d requests after the abort, want 1", len(p.Requests()))
	}
}

// TestPromptBlocks: an attached image reaches the model in the user
// message.
func TestPromptBlocks(t *testing.T) {
	p := script(llm.ScriptTurn{Text: "a cat"})
	a := agent.New(agent.Config{Provider: p})
	if _, err := a.PromptBlocks(context.Background(), nil); err == nil {
		t.Fatal("empty message accepted")
	}
	blocks := []tool.ContentBlock{tool.Text("what is this?"), tool.Image("aGVsbG8=", "image/png")}
	if _, err := a.PromptBlocks(context.Background(), blocks); err != nil {
		t.Fatal(err)
	}
	m := p.Requests()[0].Messages[0]
	if len(m.Content) != 2 || m.Content[1].Type != "image" || m.Content[1].MimeType != "image/png" {
		t.Fatalf("user message %+v", m)
	}
}
