package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/anthropic"
	"github.com/pi-go/pi/runtime/content"
)

func TestAnthropicStreamsThinkingTextAndCalls(t *testing.T) {
	srv := anthropic.NewServer(t, anthropic.Reply{
		Chunks: 3,
		Blocks: []anthropic.Block{
			{Type: "thinking", Text: "Let me think about the weather.", Signature: "sig-ABC=="},
			{Type: "redacted_thinking", Data: "ENCRYPTED-DATA"},
			{Type: "text", Text: "Checking the weather."},
			{Type: "tool_use", ID: "toolu_01", Name: "get_weather", Input: `{"location":"San Francisco, CA","unit":"celsius"}`},
		},
		Usage: anthropic.Usage{Input: 10, Output: 42, CacheRead: 100, CacheWrite: 7},
	})
	p := newNative(t, APIAnthropicMessages, srv.URL, nil)
	var rec recorder
	res, err := p.Stream(context.Background(), userRequest("weather?"), rec.on)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Message
	want := []content.Block{
		{Type: "thinking", Thinking: "Let me think about the weather.", Signature: "sig-ABC=="},
		{Type: "thinking", Thinking: "[Reasoning redacted]", Signature: "ENCRYPTED-DATA", Redacted: true},
		content.Text("Checking the weather."),
	}
	if got, w := jsonText(t, m.Content), jsonText(t, want); got != w {
		t.Errorf("content\n got %s\nwant %s", got, w)
	}
	if len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "toolu_01" || m.ToolCalls[0].Name != "get_weather" ||
		string(m.ToolCalls[0].Arguments) != `{"location":"San Francisco, CA","unit":"celsius"}` {
		t.Errorf("tool calls = %+v", m.ToolCalls)
	}
	if res.StopReason != StopToolUse {
		t.Errorf("stop = %q", res.StopReason)
	}
	if u := res.Usage; u.InputTokens != 10 || u.OutputTokens != 42 || u.CacheReadTokens != 100 || u.CacheWriteTokens != 7 || u.TotalTokens != 159 {
		t.Errorf("usage = %+v", u)
	}
	if m.API != APIAnthropicMessages || m.Provider != "test" || m.Model != "test-model" {
		t.Errorf("provenance = %q %q %q", m.API, m.Provider, m.Model)
	}
	var thinking strings.Builder
	for _, ev := range rec.events {
		if ev.Type == EventThinkingDelta {
			thinking.WriteString(ev.Delta)
		}
	}
	if thinking.String() != "Let me think about the weather." {
		t.Errorf("thinking deltas = %q", thinking.String())
	}
	if !rec.thinkingFirst() {
		t.Errorf("a thinking delta after the text: %+v", rec.events)
	}
	if rec.count(EventThinkingDelta) != 3 {
		t.Errorf("%d thinking deltas, want 3", rec.count(EventThinkingDelta))
	}
	if rec.text() != "Checking the weather." {
		t.Errorf("text deltas = %q", rec.text())
	}
	args, starts := rec.calls()
	if len(starts) != 1 || starts[0].ToolCallID != "toolu_01" || args[0] != `{"location":"San Francisco, CA","unit":"celsius"}` {
		t.Errorf("call events = %v %v", starts, args)
	}

	r := srv.Requests()[0]
	if r.URI != "/v1/messages" || r.Header.Get("x-api-key") != testKey || r.Header.Get("anthropic-version") != "2023-06-01" {
		t.Errorf("request %s headers %v", r.URI, r.Header)
	}
	if r.Header.Get("Authorization") != "" {
		t.Errorf("Authorization sent to Anthropic: %q", r.Header.Get("Authorization"))
	}
	if path(r.JSON, "stream") != true || path(r.JSON, "model") != "test-model" {
		t.Errorf("body = %s", r.Raw)
	}
}

// A tool loop: the second request sends the thinking (signature and
// redacted data unchanged) and the call back, and marks the system prompt,
// the last tool and the tool_result (the last block of the last turn) for
// the cache.
func TestAnthropicSendsThinkingBackAndCaches(t *testing.T) {
	srv := anthropic.NewServer(t,
		anthropic.Reply{Blocks: []anthropic.Block{
			{Type: "thinking", Text: "plan", Signature: "sig/+=1"},
			{Type: "redacted_thinking", Data: "REDACTED+/=="},
			{Type: "tool_use", ID: "toolu_9", Name: "read", Input: `{"path":"a.txt"}`},
		}},
		anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "done"}}},
	)
	p := newNative(t, APIAnthropicMessages, srv.URL, nil)
	req := userRequest("read a.txt")
	req.SystemPrompt = "You are pi."
	req.Tools = []ToolSpec{{Name: "read", Description: "Read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "ls", Description: "List a folder", Parameters: []byte(`{"type":"object"}`)}}
	res, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, res.Message, Message{Role: RoleToolResult, ToolCallID: "toolu_9", ToolName: "read", Content: []content.Block{content.Text("hello")}})
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[1].JSON
	if got := jsonText(t, path(body, "tools")); got != `[{"description":"Read a file","input_schema":{"properties":{"path":{"type":"string"}},"type":"object"},"name":"read"},{"cache_control":{"type":"ephemeral"},"description":"List a folder","input_schema":{"type":"object"},"name":"ls"}]` {
		t.Errorf("tools = %s (the last one marks the end of the cached tools)", got)
	}
	if got := jsonText(t, path(body, "system")); got != `[{"cache_control":{"type":"ephemeral"},"text":"You are pi.","type":"text"}]` {
		t.Errorf("system = %s", got)
	}
	asst := path(body, "messages", 1, "content")
	want := `[{"signature":"sig/+=1","thinking":"plan","type":"thinking"},{"data":"REDACTED+/==","type":"redacted_thinking"},{"id":"toolu_9","input":{"path":"a.txt"},"name":"read","type":"tool_use"}]`
	if got := jsonText(t, asst); got != want {
		t.Errorf("assistant turn\n got %s\nwant %s", got, want)
	}
	last := path(body, "messages", -1)
	if got := jsonText(t, last); got != `{"content":[{"cache_control":{"type":"ephemeral"},"content":"hello","is_error":false,"tool_use_id":"toolu_9","type":"tool_result"}],"role":"user"}` {
		t.Errorf("last turn = %s", got)
	}
	if n := strings.Count(string(srv.Requests()[1].Raw), "cache_control"); n != 3 {
		t.Errorf("%d cache_control marks, want 3 (system, last tool, last block)", n)
	}
	// The first turn's only user block is marked too.
	if path(srv.Requests()[0].JSON, "messages", 0, "content", 0, "cache_control", "type") != "ephemeral" {
		t.Errorf("first request's user block not marked: %s", srv.Requests()[0].Raw)
	}
}

func TestAnthropicThinkingLevels(t *testing.T) {
	budget := func(model string, caps Capabilities, level ThinkingLevel) (map[string]any, http.Header) {
		t.Helper()
		srv := anthropic.NewServer(t, anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "ok"}}})
		p := newNative(t, APIAnthropicMessages, srv.URL, func(c *ProviderConfig) { c.Model = model; c.Caps = caps })
		req := userRequest("hi")
		req.Thinking = level
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
		r := srv.Requests()[0]
		return r.JSON, r.Header
	}
	reasoning := Capabilities{Reasoning: true, XHigh: true, MaxTokens: 64000}
	prev := 0.0
	for _, l := range ThinkingLevels[1:] {
		body, h := budget("claude-sonnet-4-5", reasoning, l)
		b, _ := path(body, "thinking", "budget_tokens").(float64)
		if path(body, "thinking", "type") != "enabled" || b <= prev || path(body, "thinking", "display") != "summarized" {
			t.Errorf("%s: thinking %v, want a budget above %v", l, path(body, "thinking"), prev)
		}
		if mt, _ := path(body, "max_tokens").(float64); mt <= b {
			t.Errorf("%s: max_tokens %v not above the budget %v", l, mt, b)
		}
		if h.Get("anthropic-beta") != "interleaved-thinking-2025-05-14" {
			t.Errorf("%s: anthropic-beta = %q", l, h.Get("anthropic-beta"))
		}
		prev = b
	}
	body, h := budget("claude-sonnet-4-5", reasoning, ThinkingOff)
	if jsonText(t, path(body, "thinking")) != `{"type":"disabled"}` || h.Get("anthropic-beta") != "" {
		t.Errorf("off: thinking %v beta %q", path(body, "thinking"), h.Get("anthropic-beta"))
	}
	body, _ = budget("claude-3-5-haiku", Capabilities{MaxTokens: 8192}, ThinkingHigh)
	if path(body, "thinking") != nil || path(body, "max_tokens") != 8192.0 {
		t.Errorf("model without reasoning: thinking %v max_tokens %v", path(body, "thinking"), path(body, "max_tokens"))
	}
	// Without xhigh support, xhigh is high.
	x, _ := budget("claude-sonnet-4-5", Capabilities{Reasoning: true, MaxTokens: 64000}, ThinkingXHigh)
	hi, _ := budget("claude-sonnet-4-5", Capabilities{Reasoning: true, MaxTokens: 64000}, ThinkingHigh)
	if jsonText(t, path(x, "thinking")) != jsonText(t, path(hi, "thinking")) {
		t.Errorf("xhigh without support = %v, want high's %v", path(x, "thinking"), path(hi, "thinking"))
	}
	// Adaptive models take an effort.
	for l, want := range map[ThinkingLevel]string{ThinkingMinimal: "low", ThinkingMedium: "medium", ThinkingHigh: "high", ThinkingXHigh: "max"} {
		body, _ := budget("claude-opus-4-6", reasoning, l)
		if path(body, "thinking", "type") != "adaptive" || path(body, "output_config", "effort") != want {
			t.Errorf("adaptive %s: thinking %v output_config %v", l, path(body, "thinking"), path(body, "output_config"))
		}
	}
}

// History from another provider: thinking becomes text, redacted thinking
// is dropped, call ids are made valid for Anthropic (and their results
// follow).
func TestAnthropicConvertsAnotherModelsHistory(t *testing.T) {
	srv := anthropic.NewServer(t, anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "ok"}}})
	p := newNative(t, APIAnthropicMessages, srv.URL, nil)
	longID := "call_abc|fc_" + strings.Repeat("x", 80)
	req := userRequest("go")
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, API: APIOpenAIResponses, Provider: "openai", Model: "gpt-5",
			Content: []content.Block{
				{Type: "thinking", Thinking: "their reasoning", Signature: `{"type":"reasoning","id":"rs_1"}`},
				{Type: "thinking", Thinking: "[Reasoning redacted]", Signature: "opaque", Redacted: true},
				content.Text("calling"),
			},
			ToolCalls: []ToolCall{{ID: longID, Name: "ls", Arguments: RawArguments(`{}`)}}},
		Message{Role: RoleToolResult, ToolCallID: longID, ToolName: "ls", Content: []content.Block{content.Text("a b")}},
	)
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0].JSON
	wantID := "call_abc_fc_" + strings.Repeat("x", 52)
	want := `[{"text":"their reasoning","type":"text"},{"text":"calling","type":"text"},{"id":"` + wantID + `","input":{},"name":"ls","type":"tool_use"}]`
	if got := jsonText(t, path(body, "messages", 1, "content")); got != want {
		t.Errorf("assistant\n got %s\nwant %s", got, want)
	}
	if got := path(body, "messages", 2, "content", 0, "tool_use_id"); got != wantID {
		t.Errorf("tool_use_id = %v, want %s", got, wantID)
	}
}

func TestAnthropicRetriesAndErrors(t *testing.T) {
	srv := anthropic.NewServer(t,
		anthropic.Reply{Status: 429, Header: http.Header{"Retry-After": {"0"}}},
		anthropic.Reply{Status: 529},
		anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "ok"}}},
	)
	p := newNative(t, APIAnthropicMessages, srv.URL, nil)
	res, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if err != nil || res.Message.Content[0].Text != "ok" || len(srv.Requests()) != 3 {
		t.Fatalf("res %+v err %v after %d requests", res, err, len(srv.Requests()))
	}

	srv = anthropic.NewServer(t, anthropic.Reply{Status: 400, ErrorMessage: "messages: bad request for key " + testKey})
	p = newNative(t, APIAnthropicMessages, srv.URL, nil)
	_, err = p.Stream(context.Background(), userRequest("hi"), nil)
	if !errors.Is(err, ErrBadRequest) || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "messages: bad request") {
		t.Errorf("400: %v", err)
	}

	srv = anthropic.NewServer(t, anthropic.Reply{Status: 401, ErrorMessage: "invalid x-api-key"})
	p = newNative(t, APIAnthropicMessages, srv.URL, nil)
	_, err = p.Stream(context.Background(), userRequest("hi"), nil)
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "TEST_API_KEY") {
		t.Errorf("401: %v", err)
	}

	srv = anthropic.NewServer(t, anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "partial"}}, StreamError: "overloaded_error"})
	p = newNative(t, APIAnthropicMessages, srv.URL, nil)
	_, err = p.Stream(context.Background(), userRequest("hi"), nil)
	if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "Overloaded") {
		t.Errorf("error event: %v", err)
	}
}

func TestAnthropicAbortKeepsWhatWasStreamed(t *testing.T) {
	srv := anthropic.NewServer(t, anthropic.Reply{Chunks: 4, StallAfter: 4,
		Blocks: []anthropic.Block{{Type: "text", Text: "one two three four"}}})
	p := newNative(t, APIAnthropicMessages, srv.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 8)
	res, err := p.Stream(ctx, userRequest("hi"), func(ev StreamEvent) {
		got <- ev.Delta
		if ev.Type == EventTextDelta {
			cancel()
		}
	})
	if err != nil || res.StopReason != StopAborted {
		t.Fatalf("res %+v err %v", res, err)
	}
	if len(res.Message.Content) != 1 || res.Message.Content[0].Text == "" {
		t.Errorf("aborted message = %+v", res.Message)
	}
}

func TestAnthropicContextOverflow(t *testing.T) {
	srv := anthropic.NewServer(t, anthropic.Reply{Status: 400, ErrorMessage: "prompt is too long: 210000 tokens > 200000 maximum"})
	p := newNative(t, APIAnthropicMessages, srv.URL, nil)
	if _, err := p.Stream(context.Background(), userRequest("hi"), nil); !IsContextOverflow(err) {
		t.Errorf("overflow not recognised: %v", err)
	}
}

// An overloaded_error event before any output is retried as a 529 is.
func TestAnthropicOverloadedEventRetried(t *testing.T) {
	srv := anthropic.NewServer(t,
		anthropic.Reply{StreamError: "overloaded_error"},
		anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "ok"}}},
	)
	p := newNative(t, APIAnthropicMessages, srv.URL, nil)
	res, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if err != nil || res.Message.Content[0].Text != "ok" || len(srv.Requests()) != 2 {
		t.Fatalf("res %+v err %v after %d requests", res, err, len(srv.Requests()))
	}
	srv = anthropic.NewServer(t, anthropic.Reply{StreamError: "overloaded_error"}, anthropic.Reply{StreamError: "overloaded_error"})
	p = newNative(t, APIAnthropicMessages, srv.URL, func(c *ProviderConfig) { c.MaxRetries = 1 })
	_, err = p.Stream(context.Background(), userRequest("hi"), nil)
	if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "529") || !strings.Contains(err.Error(), "2 attempts") {
		t.Errorf("exhausted: %v", err)
	}
}
