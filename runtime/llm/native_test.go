package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/internal/testkit/anthropic"
	"github.com/pi-go/pi/internal/testkit/gemini"
	"github.com/pi-go/pi/internal/testkit/responses"
	"github.com/pi-go/pi/runtime/content"
)

// newNative returns a provider of api for baseURL with short backoff
// delays; mod changes the configuration first.
func newNative(t *testing.T, api, baseURL string, mod func(*ProviderConfig)) Provider {
	t.Helper()
	cfg := ProviderConfig{API: api, Provider: "test", BaseURL: baseURL, Model: "test-model", APIKey: testKey, APIKeyEnv: "TEST_API_KEY",
		Caps: Capabilities{Reasoning: true, Images: true, MaxTokens: 64000}}
	if mod != nil {
		mod(&cfg)
	}
	p, err := NewProvider(cfg)
	if err != nil {
		t.Fatalf("NewProvider: %v", err)
	}
	var tr *transport
	switch p := p.(type) {
	case *Anthropic:
		tr = p.transport
	case *Responses:
		tr = p.transport
	case *Gemini:
		tr = p.transport
	case *OpenAI:
		tr = p.transport
	}
	tr.baseDelay = time.Millisecond
	tr.maxDelay = 10 * time.Millisecond
	return p
}

// path returns the value at a path of map keys and slice indexes in a
// decoded JSON document, or nil.
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			s, _ := v.([]any)
			if k < 0 {
				k += len(s)
			}
			if k < 0 || k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Whatever header carries the key (x-api-key, Authorization,
// x-goog-api-key) or a ?key= in the base URL, the key appears in no error,
// log line or stream event, even when the server echoes it.
func TestNativeKeyNeverShown(t *testing.T) {
	for _, tt := range []struct {
		api    string
		server func(t *testing.T, status int, msg string) (url string)
	}{
		{APIAnthropicMessages, func(t *testing.T, status int, msg string) string {
			return anthropic.NewServer(t, anthropic.Reply{Status: 503, ErrorMessage: msg}, anthropic.Reply{Status: status, ErrorMessage: msg}).URL
		}},
		{APIOpenAIResponses, func(t *testing.T, status int, msg string) string {
			return responses.NewServer(t, responses.Reply{Status: 503, ErrorMessage: msg}, responses.Reply{Status: status, ErrorMessage: msg}).URL + "/v1"
		}},
		{APIGoogleGenerative, func(t *testing.T, status int, msg string) string {
			return gemini.NewServer(t, gemini.Reply{Status: 503, ErrorMessage: msg}, gemini.Reply{Status: status, ErrorMessage: msg}).URL + "/v1beta"
		}},
	} {
		for _, status := range []int{400, 401, 404, 429} {
			var logs bytes.Buffer
			url := tt.server(t, status, "echo "+testKey)
			p := newNative(t, tt.api, url+"?key="+testKey, func(c *ProviderConfig) {
				c.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Trace})
				c.MaxRetries = 1
			})
			_, err := p.Stream(context.Background(), userRequest("hi"), nil)
			if err == nil {
				t.Fatalf("%s %d: no error", tt.api, status)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(logs.String(), testKey) {
				t.Errorf("%s %d: the key leaked:\nerr=%v\nlogs=%s", tt.api, status, err, logs.String())
			}
			if !strings.Contains(logs.String(), "[REDACTED]") {
				t.Errorf("%s %d: logs lack the redacted lines:\n%s", tt.api, status, logs.String())
			}
		}
	}
}

// A key the model writes is hidden in the events (split across deltas
// too), never in the message.
func TestNativeKeyRedactedInEvents(t *testing.T) {
	half := len(testKey) / 2
	srv := anthropic.NewServer(t, anthropic.Reply{Blocks: []anthropic.Block{
		{Type: "thinking", Text: "the key is " + testKey, Signature: "s"},
		{Type: "text", Text: "key: " + testKey[:half] + testKey[half:]},
	}, Chunks: 5})
	p := newNative(t, APIAnthropicMessages, srv.URL, nil)
	var rec recorder
	res, err := p.Stream(context.Background(), userRequest("hi"), rec.on)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range rec.events {
		if strings.Contains(ev.Delta, testKey[:8]) {
			t.Errorf("event shows the key: %+v", ev)
		}
	}
	if !strings.Contains(res.Message.Content[1].Text, testKey) {
		t.Errorf("the message itself was rewritten: %q", res.Message.Content[1].Text)
	}
}

// A connection cut mid-stream is a connection error, not retried (output
// was shown).
func TestNativeDroppedMidStream(t *testing.T) {
	srv := gemini.NewServer(t, gemini.Reply{Chunks: 5, DropAfter: 2, Parts: []gemini.Part{{Text: "one two three four five"}}})
	p := newNative(t, APIGoogleGenerative, srv.URL+"/v1beta", nil)
	_, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if !errors.Is(err, ErrConnection) || len(srv.Requests()) != 1 {
		t.Errorf("err = %v after %d requests", err, len(srv.Requests()))
	}
}

func TestNewProviderErrors(t *testing.T) {
	for _, tt := range []struct {
		cfg  ProviderConfig
		want string
	}{
		{ProviderConfig{API: "bedrock", Model: "m"}, `api "bedrock": want one of openai-completions, anthropic-messages, openai-responses, google-generative-ai`},
		{ProviderConfig{API: APIAnthropicMessages}, "model: missing"},
		{ProviderConfig{API: APIGoogleGenerative, Model: "m", APIKey: testKey, BaseURL: "ftp://x?key=" + testKey}, "[REDACTED]"},
	} {
		_, err := NewProvider(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), testKey) {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
	for _, api := range APIs {
		p, err := NewProvider(ProviderConfig{API: api, Model: "m"})
		if err != nil || p == nil {
			t.Errorf("%s with the default base URL: %v", api, err)
		}
	}
}

// Images go as each API takes them, or as a note to a model without image
// input; a tool result's images too.
func TestNativeImages(t *testing.T) {
	img := content.Image("iVBORw0KGgo=", "image/png")
	req := Request{Messages: []Message{
		{Role: RoleUser, Content: []content.Block{content.Text("look"), img}},
		{Role: RoleAssistant, API: "x", Content: []content.Block{content.Text("calling")}, ToolCalls: []ToolCall{{ID: "c1", Name: "shot", Arguments: RawArguments(`{}`)}}},
		{Role: RoleToolResult, ToolCallID: "c1", ToolName: "shot", Content: []content.Block{img}},
	}}
	for _, tt := range []struct {
		api          string
		url          func(t *testing.T) (string, func() []byte)
		images, note string
	}{
		{APIAnthropicMessages, func(t *testing.T) (string, func() []byte) {
			s := anthropic.NewServer(t, anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "ok"}}})
			return s.URL, func() []byte { return s.Requests()[0].Raw }
		}, `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}`, userImageOmittedText},
		{APIOpenAIResponses, func(t *testing.T) (string, func() []byte) {
			s := responses.NewServer(t, responses.Reply{Items: []responses.Item{{Type: "message", Text: "ok"}}})
			return s.URL + "/v1", func() []byte { return s.Requests()[0].Raw }
		}, `{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,iVBORw0KGgo="}`, userImageOmittedText},
		{APIGoogleGenerative, func(t *testing.T) (string, func() []byte) {
			s := gemini.NewServer(t, gemini.Reply{Parts: []gemini.Part{{Text: "ok"}}})
			return s.URL + "/v1beta", func() []byte { return s.Requests()[0].Raw }
		}, `{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}`, userImageOmittedText},
	} {
		for _, images := range []bool{true, false} {
			url, raw := tt.url(t)
			p := newNative(t, tt.api, url, func(c *ProviderConfig) { c.Caps.Images = images })
			if _, err := p.Stream(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			body := string(raw())
			n := strings.Count(body, tt.images)
			switch {
			case images && n != 2:
				t.Errorf("%s: %d images sent, want 2 (user, tool result):\n%s", tt.api, n, body)
			case !images && (n != 0 || !strings.Contains(body, tt.note) || !strings.Contains(body, toolImageOmittedText)):
				t.Errorf("%s without images: %d images sent, notes missing:\n%s", tt.api, n, body)
			}
		}
	}
}
