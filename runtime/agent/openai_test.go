package agent_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// openAI returns the real OpenAI-compatible provider pointed at srv, with
// its own transport so the test can close its connections.
func openAI(t testing.TB, srv *openai.Server) llm.Provider {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL, Model: "test-model", APIKey: "sk-test", MaxRetries: -1, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wireMessages returns the role and, for tool messages, the tool_call_id
// and content of the messages of a recorded request body.
func wireMessages(t *testing.T, body map[string]any) []string {
	t.Helper()
	msgs, ok := body["messages"].([]any)
	if !ok {
		t.Fatalf("request has no messages: %v", body)
	}
	var out []string
	for _, m := range msgs {
		mm := m.(map[string]any)
		s := mm["role"].(string)
		if s == "tool" {
			s += ":" + mm["tool_call_id"].(string) + "=" + contentText(mm["content"])
		}
		out = append(out, s)
	}
	return out
}

func contentText(c any) string {
	switch c := c.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				if s, ok := pm["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}

func TestOpenAIWireParallelRun(t *testing.T) {
	srv := openai.NewServer(t,
		openai.Reply{Text: "Napping twice.", Chunks: 3, Interleave: true, ToolCalls: []openai.ToolCall{
			{ID: "call_slow", Name: "sleep", Arguments: `{"ms":5000,"until":1,"tag":"slow"}`},
			{ID: "call_fast", Name: "sleep", Arguments: `{"ms":1,"tag":"fast"}`},
		}, Usage: &openai.Usage{PromptTokens: 50, CompletionTokens: 10, TotalTokens: 60}},
		openai.Reply{Text: "Both done.", Chunks: 2, Usage: &openai.Usage{PromptTokens: 80, CompletionTokens: 4, TotalTokens: 84}},
	)
	tl := &timeline{}
	a := agent.New(agent.Config{Provider: openAI(t, srv), Tools: wrap(t, sleepTool("sleep", tool.Parallel, tl)), SystemPrompt: "sys", OnEvent: tl.watch(nil)})
	res, err := a.Run(context.Background(), "nap")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Both done." || res.StopReason != llm.StopEnd || res.Usage.TotalTokens != 144 {
		t.Fatalf("result %q %q usage %+v", res.Text, res.StopReason, res.Usage)
	}
	spans := tl.byTag(t)
	if !overlaps(spans["slow"], spans["fast"]) {
		t.Fatalf("calls did not overlap: %+v", spans)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	got := wireMessages(t, reqs[1])
	want := []string{"system", "user", "assistant", "tool:call_slow=slow slept 5000ms", "tool:call_fast=fast slept 1ms"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("second request messages %q, want %q", got, want)
	}
	if tools, _ := reqs[0]["tools"].([]any); len(tools) != 1 {
		t.Fatalf("tools sent: %v", reqs[0]["tools"])
	}
}

func TestOpenAIWireCancelMidStream(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{
		Text: "one two three four five six", Chunks: 6, StallAfter: 3,
		ToolCalls: []openai.ToolCall{{Name: "sleep", Arguments: `{"ms":1}`}},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tl := &timeline{}
	ev := &events{}
	a := agent.New(agent.Config{
		Provider: openAI(t, srv),
		Tools:    wrap(t, sleepTool("sleep", tool.Parallel, tl)),
		OnEvent: func(e agent.Event) {
			ev.on(e)
			// The server stalls after two text pieces; cancel once both are in.
			if e.Type == agent.EventMessageUpdate && len(ev.ofType(agent.EventMessageUpdate)) == 2 {
				cancel()
			}
		},
	})
	res, err := a.Run(ctx, "count")
	if err != nil {
		t.Fatalf("a cancelled run is not an error: %v", err)
	}
	if res.StopReason != llm.StopAborted || tl.len() != 0 {
		t.Fatalf("stop %q, %d tool runs", res.StopReason, tl.len())
	}
	msgs := a.Messages()
	if len(msgs) != 2 || len(msgs[1].ToolCalls) != 0 || !strings.HasPrefix("one two three four five six", text(msgs[1])) || text(msgs[1]) == "" {
		t.Fatalf("kept messages %+v", msgs)
	}
}

func TestOpenAIWireProviderError(t *testing.T) {
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "sleep", Arguments: `{"ms":1,"tag":"a"}`}}},
		openai.Reply{Status: http.StatusUnauthorized, ErrorMessage: "Incorrect API key provided"},
	)
	ev := &events{}
	a := agent.New(agent.Config{Provider: openAI(t, srv), Tools: wrap(t, sleepTool("sleep", tool.Parallel, &timeline{})), OnEvent: ev.on})
	res, err := a.Run(context.Background(), "go")
	if !errors.Is(err, llm.ErrAuth) {
		t.Fatalf("err = %v, want one wrapping llm.ErrAuth", err)
	}
	if strings.Contains(err.Error(), "sk-test") {
		t.Fatalf("error shows the key: %v", err)
	}
	if res.StopReason != llm.StopError || len(a.Messages()) != 3 {
		t.Fatalf("stop %q, %d messages kept", res.StopReason, len(a.Messages()))
	}
	all := ev.all()
	if last := all[len(all)-1]; last.Type != agent.EventAgentEnd || last.Error == "" {
		t.Fatalf("last event %+v", last)
	}
}

// TestCallIDsMadeUnique: a server that sends tool calls without ids (some
// OpenAI-compatible servers do) or a provider that repeats one still gets one
// result per call, each answering its own call.
func TestCallIDsMadeUnique(t *testing.T) {
	chunk := func(delta, finish string) string {
		return `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	noIDs := chunk(`{"role":"assistant","tool_calls":[{"index":0,"type":"function","function":{"name":"sleep","arguments":"{\"ms\":1,\"tag\":\"a\"}"}}]}`, "null") +
		chunk(`{"tool_calls":[{"index":1,"type":"function","function":{"name":"sleep","arguments":"{\"ms\":1,\"tag\":\"b\"}"}}]}`, "null") +
		chunk(`{}`, `"tool_calls"`) + "data: [DONE]\n\n"

	tests := []struct {
		name     string
		provider func(t *testing.T) llm.Provider
		wantIDs  []string // nil: any two distinct ids
	}{
		{"no ids on the wire", func(t *testing.T) llm.Provider {
			return openAI(t, openai.NewServer(t, openai.Reply{Body: noIDs}, openai.Reply{Text: "ok"}))
		}, nil}, // the provider may name them itself
		{"repeated id", func(*testing.T) llm.Provider {
			return script(llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{
				{ID: "dup", Name: "sleep", Arguments: []byte(`{"ms":1,"tag":"a"}`)},
				{ID: "dup", Name: "sleep", Arguments: []byte(`{"ms":1,"tag":"b"}`)},
			}}, llm.ScriptTurn{Text: "ok"})
		}, []string{"dup", "call_1_2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := agent.New(agent.Config{Provider: tc.provider(t), Tools: wrap(t, sleepTool("sleep", tool.Parallel, &timeline{}))})
			res, err := a.Run(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			var callIDs, resultIDs, texts []string
			for _, m := range res.Messages {
				for _, c := range m.ToolCalls {
					callIDs = append(callIDs, c.ID)
				}
				if m.Role == llm.RoleToolResult {
					resultIDs = append(resultIDs, m.ToolCallID)
					texts = append(texts, text(m))
				}
			}
			want := tc.wantIDs
			if want == nil && len(callIDs) == 2 && callIDs[0] != "" && callIDs[1] != "" && callIDs[0] != callIDs[1] {
				want = callIDs
			}
			if !reflect.DeepEqual(callIDs, want) || !reflect.DeepEqual(resultIDs, want) {
				t.Fatalf("call ids %q, result ids %q, want %q", callIDs, resultIDs, want)
			}
			if !reflect.DeepEqual(texts, []string{"a slept 1ms", "b slept 1ms"}) {
				t.Fatalf("results %q", texts)
			}
		})
	}
}

// A failed model request reads as one sentence a person can act on: what
// failed, the provider's own words (URL, status, what to do), no internal
// prefixes; errors.Is still finds the provider's kind.
func TestOpenAIFailedRequestError(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Status: 401, ErrorMessage: "Incorrect API key provided"})
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL, Model: "test-model", APIKey: "sk-wrong-0123456789", APIKeyEnv: "OPENAI_API_KEY", MaxRetries: -1, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	var ended string
	a := agent.New(agent.Config{Provider: p, OnEvent: func(ev agent.Event) {
		if ev.Type == agent.EventAgentEnd {
			ended = ev.Error
		}
	}})
	_, err = a.Run(context.Background(), "hi")
	if !errors.Is(err, llm.ErrAuth) {
		t.Fatalf("err = %v, want llm.ErrAuth", err)
	}
	want := "model request failed: the API key from OPENAI_API_KEY was rejected by " + srv.URL + " (401): set a valid key in OPENAI_API_KEY or pass --api-key (server said: Incorrect API key provided)"
	if err.Error() != want || ended != want {
		t.Fatalf("err   = %q\nevent = %q\nwant    %q", err, ended, want)
	}
}
