package llm

import (
	"context"
	"testing"

	"github.com/pi-go/pi/internal/testkit/anthropic"
	"github.com/pi-go/pi/internal/testkit/gemini"
	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/responses"
)

// Request.MaxTokens reaches each API as its own output limit, capped by
// the model's (MaxTokens 64000 in newNative); without it each sends what
// it sent before.
func TestRequestMaxTokensPerAPI(t *testing.T) {
	type sent func(t *testing.T, maxTokens int) any
	send := func(t *testing.T, api, base string, maxTokens int) {
		t.Helper()
		p := newNative(t, api, base, func(c *ProviderConfig) { c.Caps.Reasoning = false })
		req := userRequest("hi")
		req.MaxTokens = maxTokens
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		api  string
		run  sent
		none any // what is sent without MaxTokens
	}{
		{APIOpenAICompletions, func(t *testing.T, n int) any {
			srv := openai.NewServer(t, openai.Reply{Text: "ok"})
			send(t, APIOpenAICompletions, srv.URL, n)
			return srv.Requests()[0]["max_completion_tokens"]
		}, nil},
		{APIAnthropicMessages, func(t *testing.T, n int) any {
			srv := anthropic.NewServer(t, anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "ok"}}})
			send(t, APIAnthropicMessages, srv.URL, n)
			return srv.Requests()[0].JSON["max_tokens"]
		}, float64(32000)},
		{APIOpenAIResponses, func(t *testing.T, n int) any {
			srv := responses.NewServer(t, responses.Reply{Items: []responses.Item{{Type: "message", Text: "ok"}}})
			send(t, APIOpenAIResponses, srv.URL+"/v1", n)
			return srv.Requests()[0].JSON["max_output_tokens"]
		}, nil},
		{APIGoogleGenerative, func(t *testing.T, n int) any {
			srv := gemini.NewServer(t, gemini.Reply{Parts: []gemini.Part{{Text: "ok"}}})
			send(t, APIGoogleGenerative, srv.URL+"/v1beta", n)
			return path(srv.Requests()[0].JSON, "generationConfig", "maxOutputTokens")
		}, float64(32000)},
	} {
		t.Run(tc.api, func(t *testing.T) {
			if got := tc.run(t, 100); got != float64(100) {
				t.Errorf("MaxTokens 100 sent as %v", got)
			}
			if got := tc.run(t, 0); got != tc.none {
				t.Errorf("without MaxTokens sent %v, want %v", got, tc.none)
			}
		})
	}
	// Above the model's own limit, the model's applies.
	srv := anthropic.NewServer(t, anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "ok"}}})
	send(t, APIAnthropicMessages, srv.URL, 1<<20)
	if got := srv.Requests()[0].JSON["max_tokens"]; got != float64(32000) {
		t.Errorf("MaxTokens past the model's: max_tokens %v, want 32000", got)
	}
	osrv := openai.NewServer(t, openai.Reply{Text: "ok"})
	send(t, APIOpenAICompletions, osrv.URL, 1<<20)
	if got := osrv.Requests()[0]["max_completion_tokens"]; got != float64(64000) {
		t.Errorf("MaxTokens past the model's: max_completion_tokens %v, want 64000", got)
	}
}
