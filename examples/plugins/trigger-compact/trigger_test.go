//go:build !wasip1

package main

import (
	"os"
	"strings"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// compactions returns the compaction entries of the session file.
func compactions(t *testing.T, rpc *porttest.RPC, id string) int {
	t.Helper()
	rpc.Send(map[string]any{"id": id, "type": "get_state"})
	file, _ := rpc.Response(id)["data"].(map[string]any)["sessionFile"].(string)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), `"type":"compaction"`)
}

// TestTriggerCompact: a turn that leaves the context over the configured
// threshold makes pi compact once idle (the model is asked for the
// summary); /trigger-compact compacts at once with the instructions
// given (after another turn, so there is something to compact).
func TestTriggerCompact(t *testing.T) {
	p := porttest.New(t, "trigger-compact", porttest.Build(t, "."), "[extensions.config]\nthreshold_tokens = 100")
	srv := openai.NewServer(t,
		openai.Reply{Text: "a long answer", Usage: &openai.Usage{PromptTokens: 500, CompletionTokens: 20}},
		openai.Reply{Text: "SUMMARY ONE"},
		openai.Reply{Text: "a short answer", Usage: &openai.Usage{PromptTokens: 10, CompletionTokens: 5}},
		openai.Reply{Text: "SUMMARY TWO"})
	rpc := p.RPC("--base-url", srv.URL, "--model", "M", "--api-key", "k")
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "tell me everything"})
	if m := rpc.UI("notify"); m["message"] != "[trigger-compact] The context holds 520 tokens (over 100): compacting" {
		t.Errorf("notify %v", m)
	}
	rpc.Idle()
	rpc.Until("compaction_end", func(m map[string]any) bool { return m["type"] == "compaction_end" })
	if n := compactions(t, rpc, "2"); n != 1 {
		t.Errorf("%d compactions after the turn", n)
	}
	rpc.Settle()
	rpc.Send(map[string]any{"id": "3a", "type": "prompt", "message": "and a little more"})
	rpc.Idle()
	rpc.Settle()
	rpc.Send(map[string]any{"id": "3", "type": "prompt", "message": "/trigger-compact keep the numbers"})
	if m := rpc.UI("notify"); m["message"] != "Compaction started" {
		t.Errorf("/trigger-compact: %v", m)
	}
	rpc.Until("compaction_end", func(m map[string]any) bool { return m["type"] == "compaction_end" })
	if n := compactions(t, rpc, "4"); n != 2 {
		t.Errorf("%d compactions after /trigger-compact", n)
	}
	if reqs := srv.Requests(); len(reqs) != 4 || !porttest.Contains(reqs[3], "keep the numbers") {
		t.Errorf("model requests %d; the last: %v", len(reqs), reqs[len(reqs)-1])
	}
}
