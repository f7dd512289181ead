//go:build !wasip1

package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestCustomCompaction: RPC compact runs the extension's hook, which asks
// the model (llm.complete, grants.llm) with its own prompt holding the
// conversation; the summary it got becomes the compaction entry.
func TestCustomCompaction(t *testing.T) {
	p := porttest.New(t, "custom-compaction", porttest.Build(t, "."), "[extensions.grants]\nllm = true")
	srv := openai.NewServer(t, openai.Reply{Text: "the answer is 42"}, openai.Reply{Text: "## Summary\nAsked; answered 42."})
	rpc := p.RPC("--base-url", srv.URL, "--model", "M", "--api-key", "k")
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "what is six times seven?"})
	rpc.Idle()
	rpc.Send(map[string]any{"id": "2", "type": "compact"})
	if m := rpc.UI("notify"); m["message"] != "[custom-compaction] Custom compaction: summarizing 2 messages (0 tokens)..." {
		t.Errorf("notify %v", m)
	}
	if r := rpc.Response("2"); r["success"] != true {
		t.Fatalf("compact: %v\n%s", r, rpc.Stderr())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !porttest.Contains(reqs[1], "You are a conversation summarizer") || !porttest.Contains(reqs[1], "user: what is six times seven?") ||
		!porttest.Contains(reqs[1], "assistant: the answer is 42") || porttest.Contains(reqs[1], `"tools"`) {
		t.Fatalf("model requests %v", reqs)
	}
	rpc.Send(map[string]any{"id": "3", "type": "get_state"})
	file, _ := rpc.Response("3")["data"].(map[string]any)["sessionFile"].(string)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var entry map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `"type":"compaction"`) {
			json.Unmarshal([]byte(line), &entry)
		}
	}
	if entry["summary"] != "## Summary\nAsked; answered 42." || !porttest.Contains(entry["details"], `"by":"custom-compaction"`) {
		t.Errorf("compaction entry %v\n%s", entry, b)
	}
}
