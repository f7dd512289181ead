package llm

import (
	"encoding/json"
	"testing"

	anthropicsdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3/responses"

	"github.com/pi-go/pi/internal/testkit/anthropic"
	testresponses "github.com/pi-go/pi/internal/testkit/responses"
)

// The delta events decoded with encoding/json into antDelta give what
// the SDK's types give.
func TestAntDeltaMatchesSDK(t *testing.T) {
	events := anthropic.Events(anthropic.Reply{Chunks: 2, Blocks: []anthropic.Block{
		{Type: "thinking", Text: "th\u00e9 \"x\"", Signature: "s+/="}, {Type: "text", Text: "a\nb"},
		{Type: "tool_use", ID: "t", Name: "n", Input: `{"a":"\u00e9"}`},
	}})
	n := 0
	for _, ev := range events {
		var ours antDelta
		if err := json.Unmarshal([]byte(ev.Data), &ours); err != nil {
			t.Fatal(err)
		}
		if ours.Type != "content_block_delta" {
			continue
		}
		n++
		var sdk anthropicsdk.MessageStreamEventUnion
		if err := sdk.UnmarshalJSON([]byte(ev.Data)); err != nil {
			t.Fatal(err)
		}
		d := sdk.Delta
		if ours.Index != sdk.Index || ours.Delta.Type != d.Type || ours.Delta.Text != d.Text || ours.Delta.Thinking != d.Thinking ||
			ours.Delta.Signature != d.Signature || ours.Delta.PartialJSON != d.PartialJSON {
			t.Errorf("%s: ours %+v, the SDK's index %d delta %+v", ev.Data, ours, sdk.Index, d)
		}
	}
	if n < 6 {
		t.Fatalf("only %d deltas checked", n)
	}
}

func TestRespDeltaMatchesSDK(t *testing.T) {
	events := testresponses.Events(testresponses.Reply{Chunks: 2, Items: []testresponses.Item{
		{Type: "reasoning", Summary: []string{"th\u00e9 \"x\""}}, {Type: "message", Text: "a\nb"},
		{Type: "function_call", CallID: "c", Name: "n", Arguments: `{"a":1}`},
	}})
	n := 0
	for _, ev := range events {
		var ours respDelta
		if err := json.Unmarshal([]byte(ev.Data), &ours); err != nil {
			t.Fatal(err)
		}
		var sdk responses.ResponseStreamEventUnion
		if err := sdk.UnmarshalJSON([]byte(ev.Data)); err != nil {
			t.Fatal(err)
		}
		if ours.Type != sdk.Type || ours.OutputIndex != sdk.OutputIndex || (len(ours.Type) > 6 && ours.Type[len(ours.Type)-6:] == ".delta" && ours.Delta != sdk.Delta) {
			t.Errorf("%s: ours %+v, the SDK's %s %d %q", ev.Data, ours, sdk.Type, sdk.OutputIndex, sdk.Delta)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("only %d events checked", n)
	}
}
