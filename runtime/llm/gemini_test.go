package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/gemini"
	"github.com/pi-go/pi/runtime/content"
)

func TestGeminiThoughtsCallsAndSignaturesBack(t *testing.T) {
	srv := gemini.NewServer(t,
		gemini.Reply{Chunks: 2, Usage: gemini.Usage{Prompt: 100, Candidates: 20, Thoughts: 30, Cached: 60}, Parts: []gemini.Part{
			{Text: "I should list the files.", Thought: true, Signature: "thought-sig-1"},
			{Text: "Listing."},
			{Call: &gemini.Call{Name: "ls", Args: `{"path":"."}`}, Signature: "call-sig-2"},
		}},
		gemini.Reply{Parts: []gemini.Part{{Text: "done"}}},
	)
	p := newNative(t, APIGoogleGenerative, srv.URL+"/v1beta", func(c *ProviderConfig) { c.Model = "gemini-2.5-pro" })
	var rec recorder
	req := userRequest("list")
	req.SystemPrompt = "You are pi."
	req.Thinking = ThinkingMedium
	req.Tools = []ToolSpec{{Name: "ls", Description: "List", Parameters: []byte(`{"type":"object"}`)}}
	res, err := p.Stream(context.Background(), req, rec.on)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Message
	want := `[{"type":"thinking","thinking":"I should list the files.","thinkingSignature":"thought-sig-1"},{"type":"text","text":"Listing."}]`
	if got := jsonText(t, m.Content); got != want {
		t.Errorf("content\n got %s\nwant %s", got, want)
	}
	if len(m.ToolCalls) != 1 || m.ToolCalls[0].Name != "ls" || string(m.ToolCalls[0].Arguments) != `{"path":"."}` || m.ToolCalls[0].ThoughtSignature != "call-sig-2" || m.ToolCalls[0].ID == "" {
		t.Errorf("calls = %+v", m.ToolCalls)
	}
	if res.StopReason != StopToolUse {
		t.Errorf("stop = %s", res.StopReason)
	}
	if u := res.Usage; u.InputTokens != 40 || u.CacheReadTokens != 60 || u.OutputTokens != 50 || u.TotalTokens != 150 {
		t.Errorf("usage = %+v", u)
	}
	if rec.count(EventThinkingDelta) != 2 || rec.text() != "Listing." {
		t.Errorf("events = %+v", rec.events)
	}
	first := srv.Requests()[0]
	if first.URI != "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse" || first.Header.Get("x-goog-api-key") != testKey {
		t.Errorf("request %s headers %v", first.URI, first.Header)
	}
	if strings.Contains(first.URI, testKey) {
		t.Errorf("key in the URL")
	}
	if got := jsonText(t, path(first.JSON, "generationConfig", "thinkingConfig")); got != `{"includeThoughts":true,"thinkingBudget":8192}` {
		t.Errorf("thinkingConfig = %s", got)
	}
	if path(first.JSON, "systemInstruction", "parts", 0, "text") != "You are pi." || path(first.JSON, "tools", 0, "functionDeclarations", 0, "parametersJsonSchema", "type") != "object" {
		t.Errorf("body = %s", first.Raw)
	}

	req.Messages = append(req.Messages, m, Message{Role: RoleToolResult, ToolCallID: m.ToolCalls[0].ID, ToolName: "ls", Content: []content.Block{content.Text("a.go")}})
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[1].JSON
	wantModel := `{"parts":[{"text":"I should list the files.","thought":true,"thoughtSignature":"thought-sig-1"},{"text":"Listing."},{"functionCall":{"args":{"path":"."},"name":"ls"},"thoughtSignature":"call-sig-2"}],"role":"model"}`
	if got := jsonText(t, path(body, "contents", 1)); got != wantModel {
		t.Errorf("model turn\n got %s\nwant %s", got, wantModel)
	}
	if got := jsonText(t, path(body, "contents", 2)); got != `{"parts":[{"functionResponse":{"name":"ls","response":{"output":"a.go"}}}],"role":"user"}` {
		t.Errorf("function response = %s", got)
	}
}

func TestGeminiThinkingConfig(t *testing.T) {
	for _, tt := range []struct {
		model string
		level ThinkingLevel
		want  string
	}{
		{"gemini-2.5-pro", ThinkingMinimal, `{"includeThoughts":true,"thinkingBudget":128}`},
		{"gemini-2.5-flash", ThinkingHigh, `{"includeThoughts":true,"thinkingBudget":24576}`},
		{"gemini-3-pro-preview", ThinkingLow, `{"includeThoughts":true,"thinkingLevel":"LOW"}`},
		{"gemini-3-flash-preview", ThinkingMedium, `{"includeThoughts":true,"thinkingLevel":"MEDIUM"}`},
		{"gemini-2.5-pro", ThinkingOff, `null`},
	} {
		srv := gemini.NewServer(t, gemini.Reply{Parts: []gemini.Part{{Text: "ok"}}})
		p := newNative(t, APIGoogleGenerative, srv.URL+"/v1beta", func(c *ProviderConfig) { c.Model = tt.model })
		req := userRequest("hi")
		req.Thinking = tt.level
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
		if got := jsonText(t, path(srv.Requests()[0].JSON, "generationConfig", "thinkingConfig")); got != tt.want {
			t.Errorf("%s %s: %s, want %s", tt.model, tt.level, got, tt.want)
		}
	}
}

func TestGeminiErrors(t *testing.T) {
	srv := gemini.NewServer(t,
		gemini.Reply{Status: 429, Header: http.Header{"Retry-After": {"0"}}},
		gemini.Reply{Status: 503},
		gemini.Reply{Parts: []gemini.Part{{Text: "ok"}}},
	)
	p := newNative(t, APIGoogleGenerative, srv.URL+"/v1beta", nil)
	if res, err := p.Stream(context.Background(), userRequest("hi"), nil); err != nil || res.Message.Content[0].Text != "ok" {
		t.Fatalf("res %+v err %v", res, err)
	}
	srv = gemini.NewServer(t, gemini.Reply{Status: 400, ErrorMessage: "Invalid JSON payload; key=" + testKey})
	p = newNative(t, APIGoogleGenerative, srv.URL+"/v1beta", nil)
	_, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if !errors.Is(err, ErrBadRequest) || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "Invalid JSON payload") {
		t.Errorf("400: %v", err)
	}
}

// Google answers a bad key with 400 INVALID_ARGUMENT: an auth error that
// names where the key came from; a prompt too long is a context overflow.
func TestGeminiRejectedKeyAndOverflow(t *testing.T) {
	srv := gemini.NewServer(t,
		gemini.Reply{Status: 400, ErrorMessage: "API key not valid. Please pass a valid API key."},
		gemini.Reply{Status: 400, ErrorMessage: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."},
	)
	p := newNative(t, APIGoogleGenerative, srv.URL+"/v1beta", nil)
	_, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "TEST_API_KEY") {
		t.Errorf("bad key: %v", err)
	}
	_, err = p.Stream(context.Background(), userRequest("hi"), nil)
	if !IsContextOverflow(err) {
		t.Errorf("overflow not recognised: %v", err)
	}
}
