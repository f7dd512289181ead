package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/responses"
	"github.com/pi-go/pi/runtime/content"
)

func TestResponsesReasoningCallsAndEncryptedContentBack(t *testing.T) {
	srv := responses.NewServer(t,
		responses.Reply{Chunks: 2, Usage: responses.Usage{Input: 20, Cached: 80, Output: 30, Reasoning: 12}, Items: []responses.Item{
			{Type: "reasoning", ID: "rs_1", Summary: []string{"First I look.", "Then I call."}, EncryptedContent: "gAAAAB-encrypted+/=="},
			{Type: "message", Text: "Listing files."},
			{Type: "function_call", ID: "fc_1", CallID: "call_A", Name: "ls", Arguments: `{"path":"."}`},
		}},
		responses.Reply{Items: []responses.Item{{Type: "message", Text: "done"}}},
	)
	p := newNative(t, APIOpenAIResponses, srv.URL+"/v1", nil)
	var rec recorder
	req := userRequest("list")
	req.SystemPrompt = "You are pi."
	req.Thinking = ThinkingHigh
	req.Tools = []ToolSpec{{Name: "ls", Description: "List", Parameters: []byte(`{"type":"object"}`)}}
	res, err := p.Stream(context.Background(), req, rec.on)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Message
	if len(m.Content) != 2 || m.Content[0].Type != "thinking" || m.Content[0].Thinking != "First I look.\n\nThen I call." || m.Content[1].Text != "Listing files." {
		t.Fatalf("content = %s", jsonText(t, m.Content))
	}
	sig := m.Content[0].Signature
	if !strings.Contains(sig, `"encrypted_content":"gAAAAB-encrypted+/=="`) || !strings.Contains(sig, `"id":"rs_1"`) {
		t.Errorf("signature = %s, want the reasoning item", sig)
	}
	if len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "call_A|fc_1" || string(m.ToolCalls[0].Arguments) != `{"path":"."}` || res.StopReason != StopToolUse {
		t.Errorf("calls %+v stop %s", m.ToolCalls, res.StopReason)
	}
	if u := res.Usage; u.InputTokens != 20 || u.CacheReadTokens != 80 || u.OutputTokens != 30 || u.TotalTokens != 130 {
		t.Errorf("usage = %+v", u)
	}
	if rec.count(EventThinkingDelta) < 2 || rec.text() != "Listing files." {
		t.Errorf("events = %+v", rec.events)
	}
	first := srv.Requests()[0]
	if first.URI != "/v1/responses" || first.Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("request %s auth %q", first.URI, first.Header.Get("Authorization"))
	}
	if got := jsonText(t, path(first.JSON, "reasoning")); got != `{"effort":"high","summary":"auto"}` {
		t.Errorf("reasoning = %s", got)
	}
	if jsonText(t, path(first.JSON, "include")) != `["reasoning.encrypted_content"]` || path(first.JSON, "store") != false {
		t.Errorf("include/store: %s", first.Raw)
	}
	if path(first.JSON, "input", 0, "role") != "developer" {
		t.Errorf("system prompt: %v", path(first.JSON, "input", 0))
	}

	req.Messages = append(req.Messages, m, Message{Role: RoleToolResult, ToolCallID: "call_A|fc_1", ToolName: "ls", Content: []content.Block{content.Text("a.go")}})
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	raw := string(srv.Requests()[1].Raw)
	if !strings.Contains(raw, sig) {
		t.Errorf("the reasoning item was not sent back unchanged:\n%s\nwant %s", raw, sig)
	}
	in := path(srv.Requests()[1].JSON, "input").([]any)
	if got := jsonText(t, in[len(in)-2]); got != `{"arguments":"{\"path\":\".\"}","call_id":"call_A","id":"fc_1","name":"ls","type":"function_call"}` {
		t.Errorf("function_call = %s", got)
	}
	if got := jsonText(t, in[len(in)-1]); got != `{"call_id":"call_A","output":"a.go","type":"function_call_output"}` {
		t.Errorf("function_call_output = %s", got)
	}
}

func TestResponsesEffortPerLevel(t *testing.T) {
	for _, tt := range []struct {
		caps  Capabilities
		level ThinkingLevel
		want  string
	}{
		{Capabilities{Reasoning: true}, ThinkingMinimal, `{"effort":"minimal","summary":"auto"}`},
		{Capabilities{Reasoning: true}, ThinkingMedium, `{"effort":"medium","summary":"auto"}`},
		{Capabilities{Reasoning: true}, ThinkingXHigh, `{"effort":"high","summary":"auto"}`},
		{Capabilities{Reasoning: true, XHigh: true}, ThinkingXHigh, `{"effort":"xhigh","summary":"auto"}`},
		{Capabilities{Reasoning: true}, ThinkingOff, `null`},
		{Capabilities{}, ThinkingHigh, `null`},
	} {
		srv := responses.NewServer(t, responses.Reply{Items: []responses.Item{{Type: "message", Text: "ok"}}})
		p := newNative(t, APIOpenAIResponses, srv.URL+"/v1", func(c *ProviderConfig) { c.Caps = tt.caps })
		req := userRequest("hi")
		req.Thinking = tt.level
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
		if got := jsonText(t, path(srv.Requests()[0].JSON, "reasoning")); got != tt.want {
			t.Errorf("%+v %s: reasoning = %s, want %s", tt.caps, tt.level, got, tt.want)
		}
	}
}

func TestResponsesErrors(t *testing.T) {
	srv := responses.NewServer(t,
		responses.Reply{Status: 429, Header: http.Header{"Retry-After": {"0"}}},
		responses.Reply{Items: []responses.Item{{Type: "message", Text: "ok"}}},
	)
	p := newNative(t, APIOpenAIResponses, srv.URL+"/v1", nil)
	if res, err := p.Stream(context.Background(), userRequest("hi"), nil); err != nil || res.Message.Content[0].Text != "ok" {
		t.Fatalf("res %+v err %v", res, err)
	}
	srv = responses.NewServer(t, responses.Reply{Status: 400, ErrorMessage: "Invalid 'input': key " + testKey})
	p = newNative(t, APIOpenAIResponses, srv.URL+"/v1", nil)
	_, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if !errors.Is(err, ErrBadRequest) || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "Invalid 'input'") {
		t.Errorf("400: %v", err)
	}
	srv = responses.NewServer(t, responses.Reply{Final: "failed", Items: []responses.Item{{Type: "message", Text: "x"}}})
	p = newNative(t, APIOpenAIResponses, srv.URL+"/v1", nil)
	if _, err := p.Stream(context.Background(), userRequest("hi"), nil); !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "The model failed") {
		t.Errorf("failed: %v", err)
	}
	srv = responses.NewServer(t, responses.Reply{Final: "incomplete", Items: []responses.Item{{Type: "message", Text: "x"}}})
	p = newNative(t, APIOpenAIResponses, srv.URL+"/v1", nil)
	if res, err := p.Stream(context.Background(), userRequest("hi"), nil); err != nil || res.StopReason != StopLength {
		t.Errorf("incomplete: %+v %v", res, err)
	}
}

// Another provider's history: thinking becomes text, and "call|item" ids
// are made valid (the reference's rule for the item half).
func TestResponsesConvertsAnotherModelsHistory(t *testing.T) {
	srv := responses.NewServer(t, responses.Reply{Items: []responses.Item{{Type: "message", Text: "ok"}}})
	p := newNative(t, APIOpenAIResponses, srv.URL+"/v1", nil)
	req := userRequest("go")
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, API: APIAnthropicMessages, Provider: "anthropic", Model: "claude",
			Content:   []content.Block{{Type: "thinking", Thinking: "hmm", Signature: "anthropic-sig"}},
			ToolCalls: []ToolCall{{ID: "toolu_1", Name: "ls", Arguments: RawArguments(`{}`)}}},
		Message{Role: RoleToolResult, ToolCallID: "toolu_1", ToolName: "ls", Content: []content.Block{content.Text("x")}},
	)
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	in := path(srv.Requests()[0].JSON, "input")
	if path(in, 1, "type") != "message" || path(in, 1, "content", 0, "text") != "hmm" {
		t.Errorf("thinking not sent as text: %s", jsonText(t, in))
	}
	if path(in, 2, "call_id") != "toolu_1" || path(in, 2, "id") != nil || path(in, 3, "call_id") != "toolu_1" {
		t.Errorf("calls: %s", jsonText(t, in))
	}
	if got := responsesToolID("call 1|item:2" + strings.Repeat("_", 70)); got != "call_1|fc_item_2" {
		t.Errorf("responsesToolID = %q", got)
	}
}
