package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/anthropic"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
)

// Config.Thinking is read before each model call and sent as the
// request's level; Config.Price prices each response's usage, which the
// message_end event and the run's sum carry.
func TestThinkingAndPrice(t *testing.T) {
	script, err := llm.ParseScript([]byte(`{"turns": [
  {"toolCalls": [{"name": "nothing"}], "usage": {"input": 1000, "output": 10, "totalTokens": 1010}},
  {"text": "done", "usage": {"input": 2000, "output": 20, "totalTokens": 2020}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := llm.NewScripted(script)
	levels := []llm.ThinkingLevel{llm.ThinkingHigh, llm.ThinkingLow}
	calls := 0
	var ends []llm.Usage
	a := agent.New(agent.Config{
		Provider: p,
		Thinking: func() llm.ThinkingLevel { l := levels[calls%2]; calls++; return l },
		Price: func(u llm.Usage) llm.Cost {
			c := llm.Cost{Input: float64(u.InputTokens) / 1e3, Output: float64(u.OutputTokens) / 1e2}
			c.Total = c.Input + c.Output
			return c
		},
		OnEvent: func(ev agent.Event) {
			if ev.Type == agent.EventMessageEnd && ev.Usage != nil {
				ends = append(ends, *ev.Usage)
			}
		},
	})
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 2 || reqs[0].Thinking != llm.ThinkingHigh || reqs[1].Thinking != llm.ThinkingLow {
		t.Fatalf("request levels %v", reqs)
	}
	if len(ends) != 2 || ends[0].Cost.Total != 1.1 || ends[1].Cost.Total != 2.2 {
		t.Errorf("message_end usage %+v", ends)
	}
	if res.Usage.Cost.Total < 3.3-1e-9 || res.Usage.Cost.Total > 3.3+1e-9 || res.Usage.InputTokens != 3000 {
		t.Errorf("run usage %+v", res.Usage)
	}
}

// A model's thinking reaches the events as the reference's stream has it:
// thinking_start, thinking_delta…, thinking_end (with the whole text) for
// each thinking block, every block numbered by contentIndex in the order
// the blocks began; the message carries the thinking block with its
// signature. The model is a real Anthropic provider on the loopback
// Messages server.
func TestThinkingEvents(t *testing.T) {
	srv := anthropic.NewServer(t,
		anthropic.Reply{Chunks: 2, Blocks: []anthropic.Block{
			{Type: "thinking", Text: "First I look. Then I act.", Signature: "sig-1"},
			{Type: "text", Text: "Looking."},
			{Type: "tool_use", ID: "toolu_1", Name: "noop", Input: `{}`},
		}},
		anthropic.Reply{Blocks: []anthropic.Block{
			{Type: "thinking", Text: "Done.", Signature: "sig-2"},
			{Type: "text", Text: "All done."},
		}},
	)
	p, err := llm.NewProvider(llm.ProviderConfig{API: llm.APIAnthropicMessages, Provider: "anthropic", BaseURL: srv.URL,
		Model: "claude-test", APIKey: "test-key", Caps: llm.Capabilities{Reasoning: true, MaxTokens: 32000}})
	if err != nil {
		t.Fatal(err)
	}
	var updates []string
	var ends []llm.Message
	a := agent.New(agent.Config{
		Provider: p,
		Tools:    wrap(t, noopTool()),
		Thinking: func() llm.ThinkingLevel { return llm.ThinkingHigh },
		OnEvent: func(ev agent.Event) {
			switch {
			case ev.Type == agent.EventMessageUpdate:
				b, _ := json.Marshal(ev.AssistantMessageEvent)
				updates = append(updates, string(b))
			case ev.Type == agent.EventMessageEnd && ev.Message.Role == llm.RoleAssistant:
				ends = append(ends, *ev.Message)
			}
		},
	})
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"type":"thinking_start","contentIndex":0}`,
		`{"type":"thinking_delta","contentIndex":0,"delta":"First I look."}`,
		`{"type":"thinking_delta","contentIndex":0,"delta":" Then I act."}`,
		`{"type":"thinking_end","contentIndex":0,"content":"First I look. Then I act."}`,
		`{"type":"text_delta","contentIndex":1,"delta":"Look"}`,
		`{"type":"text_delta","contentIndex":1,"delta":"ing."}`,
		`{"type":"toolcall_start","contentIndex":2,"toolCallId":"toolu_1","toolName":"noop"}`,
		`{"type":"toolcall_delta","contentIndex":2,"delta":"{","toolCallId":"toolu_1","toolName":"noop"}`,
		`{"type":"toolcall_delta","contentIndex":2,"delta":"}","toolCallId":"toolu_1","toolName":"noop"}`,
		`{"type":"thinking_start","contentIndex":0}`,
		`{"type":"thinking_delta","contentIndex":0,"delta":"Done."}`,
		`{"type":"thinking_end","contentIndex":0,"content":"Done."}`,
		`{"type":"text_delta","contentIndex":1,"delta":"All done."}`,
	}
	if strings.Join(updates, "\n") != strings.Join(want, "\n") {
		t.Errorf("message_update events:\n%s\nwant\n%s", strings.Join(updates, "\n"), strings.Join(want, "\n"))
	}
	if len(ends) != 2 {
		t.Fatalf("%d assistant messages", len(ends))
	}
	b, _ := json.Marshal(ends[0].Content)
	if string(b) != `[{"type":"thinking","thinking":"First I look. Then I act.","thinkingSignature":"sig-1"},{"type":"text","text":"Looking."}]` {
		t.Errorf("first message content %s", b)
	}
}
