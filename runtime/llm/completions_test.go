package llm

import (
	"context"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/anthropic"
	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/content"
)

// Reasoning deltas of OpenAI-compatible servers become a thinking block
// (its signature names the member), sent back in that member to the same
// model and as text to another; reasoning_effort goes to models that take
// it.
func TestCompletionsReasoning(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			srv := openai.NewServer(t,
				openai.Reply{Reasoning: "Think first.", ReasoningField: field, Text: "Answer.", Chunks: 2,
					Usage: &openai.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110, CachedTokens: 40}},
				openai.Reply{Text: "ok"},
			)
			p := newNative(t, APIOpenAICompletions, srv.URL, func(c *ProviderConfig) { c.Caps.XHigh = false })
			var rec recorder
			req := userRequest("q")
			req.Thinking = ThinkingXHigh
			res, err := p.Stream(context.Background(), req, rec.on)
			if err != nil {
				t.Fatal(err)
			}
			want := `[{"type":"thinking","thinking":"Think first.","thinkingSignature":"` + field + `"},{"type":"text","text":"Answer."}]`
			if got := jsonText(t, res.Message.Content); got != want {
				t.Errorf("content\n got %s\nwant %s", got, want)
			}
			if rec.count(EventThinkingDelta) != 2 || !rec.thinkingFirst() {
				t.Errorf("%d thinking deltas, all before the text: %v", rec.count(EventThinkingDelta), rec.thinkingFirst())
			}
			if u := res.Usage; u.InputTokens != 60 || u.CacheReadTokens != 40 || u.OutputTokens != 10 {
				t.Errorf("usage = %+v", u)
			}
			if got := srv.Requests()[0]["reasoning_effort"]; got != "high" {
				t.Errorf("reasoning_effort = %v, want high (xhigh without support)", got)
			}
			req.Messages = append(req.Messages, res.Message, Message{Role: RoleUser, Content: []content.Block{content.Text("more")}})
			if _, err := p.Stream(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			asst := path(srv.Requests()[1], "messages", 1)
			if got := jsonText(t, asst); got != `{"content":"Answer.","`+field+`":"Think first.","role":"assistant"}` {
				t.Errorf("assistant sent back = %s", got)
			}
		})
	}

	srv := openai.NewServer(t, openai.Reply{Text: "ok"})
	p := newNative(t, APIOpenAICompletions, srv.URL, func(c *ProviderConfig) { c.Caps.Reasoning = false })
	req := userRequest("q")
	req.Thinking = ThinkingHigh
	req.Messages = append(req.Messages, Message{Role: RoleAssistant, API: APIAnthropicMessages, Provider: "anthropic", Model: "claude",
		Content: []content.Block{content.Thinking("their thought", "sig"), content.Text("their answer")}})
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0]
	if _, ok := body["reasoning_effort"]; ok {
		t.Errorf("reasoning_effort sent to a model without reasoning")
	}
	if got := jsonText(t, path(body, "messages", 1)); got != `{"content":"their thought\ntheir answer","role":"assistant"}` {
		t.Errorf("another model's message = %s", got)
	}
}

// Thinking whose end could begin the key (held back by the redactor until
// it is known not to be the key) still streams before the text after it,
// on both wires that assemble thinking: a front end sees one thinking
// block, then the text.
func TestThinkingTailBeforeText(t *testing.T) {
	tail := "the key starts " + testKey[:5]
	osrv := openai.NewServer(t, openai.Reply{Reasoning: tail, ReasoningField: "reasoning_content", Text: "Answer."})
	asrv := anthropic.NewServer(t, anthropic.Reply{Blocks: []anthropic.Block{
		{Type: "thinking", Text: tail, Signature: "sig"}, {Type: "text", Text: "Answer."}}})
	for api, url := range map[string]string{APIOpenAICompletions: osrv.URL, APIAnthropicMessages: asrv.URL} {
		p := newNative(t, api, url, nil)
		var rec recorder
		req := userRequest("q")
		req.Thinking = ThinkingHigh
		if _, err := p.Stream(context.Background(), req, rec.on); err != nil {
			t.Fatal(err)
		}
		var thinking strings.Builder
		for _, ev := range rec.events {
			if ev.Type == EventThinkingDelta {
				thinking.WriteString(ev.Delta)
			}
		}
		if !rec.thinkingFirst() || thinking.String() != tail || rec.text() != "Answer." {
			t.Errorf("%s: thinking %q then text %q, in order %v: %+v", api, thinking.String(), rec.text(), rec.thinkingFirst(), rec.events)
		}
	}
}
