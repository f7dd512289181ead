package llm

import (
	"encoding/json"
	"testing"

	anthropicsdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3/responses"

	"github.com/pi-go/pi/internal/testkit/anthropic"
	testresponses "github.com/pi-go/pi/internal/testkit/responses"
	"github.com/pi-go/pi/internal/testkit/ssekit"
)

// The vendors' SDKs are the oracle of pi's event types: every event of
// the test servers' streams (every kind pi reads) decodes into antEvent
// and respEvent as into the SDK's unions.

func TestAntEventMatchesSDK(t *testing.T) {
	events := anthropic.Events(anthropic.Reply{Chunks: 2, Usage: anthropic.Usage{Input: 3, Output: 5, CacheRead: 7, CacheWrite: 11}, Blocks: []anthropic.Block{
		{Type: "thinking", Text: "th\u00e9 \"x\"", Signature: "s+/="}, {Type: "redacted_thinking", Data: "RED"},
		{Type: "text", Text: "a\nb"}, {Type: "tool_use", ID: "toolu_1", Name: "n", Input: `{"a":"\u00e9"}`},
	}})
	events = append(events, anthropic.Events(anthropic.Reply{StreamError: "overloaded_error"})...)
	kinds := map[string]bool{}
	for _, ev := range events {
		var ours antEvent
		if err := json.Unmarshal([]byte(ev.Data), &ours); err != nil {
			t.Fatal(err)
		}
		var sdk anthropicsdk.MessageStreamEventUnion
		if err := sdk.UnmarshalJSON([]byte(ev.Data)); err != nil {
			t.Fatal(err)
		}
		kinds[ours.Type] = true
		cb, d := sdk.ContentBlock, sdk.Delta
		same := ours.Type == sdk.Type && ours.Index == sdk.Index &&
			ours.ContentBlock.Type == cb.Type && ours.ContentBlock.Text == cb.Text && ours.ContentBlock.Thinking == cb.Thinking &&
			ours.ContentBlock.Signature == cb.Signature && ours.ContentBlock.Data == cb.Data && ours.ContentBlock.ID == cb.ID && ours.ContentBlock.Name == cb.Name &&
			ours.Delta.Type == d.Type && ours.Delta.Text == d.Text && ours.Delta.Thinking == d.Thinking && ours.Delta.Signature == d.Signature &&
			ours.Delta.PartialJSON == d.PartialJSON && ours.Delta.StopReason == string(d.StopReason)
		var got, want Usage
		ours.Message.Usage.addTo(&got)
		ours.Usage.addTo(&got)
		mu, du := sdk.Message.Usage, sdk.Usage
		if mu.JSON.InputTokens.Valid() {
			want = Usage{InputTokens: int(mu.InputTokens), OutputTokens: int(mu.OutputTokens), CacheReadTokens: int(mu.CacheReadInputTokens), CacheWriteTokens: int(mu.CacheCreationInputTokens)}
		}
		if du.JSON.OutputTokens.Valid() {
			want.OutputTokens = int(du.OutputTokens)
		}
		if !same || got != want {
			t.Errorf("%s:\n ours %+v usage %+v\n the SDK's %s index %d block %+v delta %+v usage %+v", ev.Data, ours, got, sdk.Type, sdk.Index, cb, d, want)
		}
	}
	for _, k := range []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "ping", "message_delta", "message_stop", "error"} {
		if !kinds[k] {
			t.Errorf("no %s event checked", k)
		}
	}
}

func TestRespEventMatchesSDK(t *testing.T) {
	reply := testresponses.Reply{Chunks: 2, Usage: testresponses.Usage{Input: 3, Cached: 4, Output: 5}, Items: []testresponses.Item{
		{Type: "reasoning", Summary: []string{"th\u00e9 \"x\"", "two"}, EncryptedContent: "enc+/="}, {Type: "message", Text: "a\nb"},
		{Type: "function_call", CallID: "c", Name: "n", Arguments: `{"a":1}`},
	}}
	events := testresponses.Events(reply)
	reply.Final = "failed"
	events = append(events, testresponses.Events(reply)...)
	events = append(events, ssekit.Event{Data: `{"type":"error","code":"server_error","message":"boom","param":null,"sequence_number":1}`})
	kinds := map[string]bool{}
	for _, ev := range events {
		var ours respEvent
		if err := json.Unmarshal([]byte(ev.Data), &ours); err != nil {
			t.Fatal(err)
		}
		var item respItem
		if len(ours.Item) > 0 {
			if err := json.Unmarshal(ours.Item, &item); err != nil {
				t.Fatal(err)
			}
		}
		var sdk responses.ResponseStreamEventUnion
		if err := sdk.UnmarshalJSON([]byte(ev.Data)); err != nil {
			t.Fatal(err)
		}
		kinds[ours.Type] = true
		var args string
		_ = json.Unmarshal(item.Arguments, &args)
		r, u := ours.Response, ours.Response.Usage
		same := ours.Type == sdk.Type && ours.OutputIndex == sdk.OutputIndex && ours.Delta == sdk.Delta && ours.Message == sdk.Message &&
			item.Type == sdk.Item.Type && item.ID == sdk.Item.ID && item.CallID == sdk.Item.CallID && item.Name == sdk.Item.Name &&
			args == sdk.Item.Arguments.OfString && (len(ours.Item) == 0 || string(ours.Item) == sdk.Item.RawJSON()) &&
			r.Status == string(sdk.Response.Status) && r.Error.Message == sdk.Response.Error.Message &&
			u.InputTokens == int(sdk.Response.Usage.InputTokens) && u.OutputTokens == int(sdk.Response.Usage.OutputTokens) &&
			u.InputTokensDetails.CachedTokens == int(sdk.Response.Usage.InputTokensDetails.CachedTokens)
		if !same {
			t.Errorf("%s:\n ours %+v item %+v\n the SDK's %+v", ev.Data, ours, item, sdk)
		}
	}
	for _, k := range []string{"response.created", "response.output_item.added", "response.reasoning_summary_part.added",
		"response.reasoning_summary_text.delta", "response.output_text.delta", "response.function_call_arguments.delta",
		"response.output_item.done", "response.completed", "response.failed", "error"} {
		if !kinds[k] {
			t.Errorf("no %s event checked", k)
		}
	}
}
