//go:build !wasip1

package main

import (
	"os"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestSummarize: after a turn with a tool call, /summarize sends the
// model the conversation (user, assistant, the tool call) with the
// summary prompt and no tools, and shows its answer; without grants.llm
// the command says why it cannot.
func TestSummarize(t *testing.T) {
	wasm := porttest.Build(t, ".")
	p := porttest.New(t, "summarize", wasm, "[extensions.grants]\nllm = true")
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "ls", Arguments: `{}`}}},
		openai.Reply{Text: "nothing here"},
		openai.Reply{Text: "# Goals\nList the folder."})
	rpc := p.RPC("--base-url", srv.URL, "--model", "M", "--api-key", "k")
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "what is in this folder?"})
	rpc.Idle()
	rpc.Settle()
	rpc.Send(map[string]any{"id": "2", "type": "prompt", "message": "/summarize"})
	if m := rpc.UI("notify"); m["message"] != "# Goals\nList the folder." {
		t.Errorf("notify %v", m)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	for _, want := range []string{"Summarize this conversation", "User: what is in this folder?", `Tool ls was called with args {}`, "Assistant: nothing here"} {
		if !porttest.Contains(last, want) {
			t.Errorf("the summary request lacks %q: %v", want, last)
		}
	}
	if last["tools"] != nil {
		t.Errorf("the summary request has tools: %v", last["tools"])
	}

	q := porttest.New(t, "summarize", wasm, "")
	srv = openai.NewServer(t, openai.Reply{Text: "hello"})
	rpc = q.RPC("--base-url", srv.URL, "--model", "M", "--api-key", "k")
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "hi"})
	rpc.Idle()
	rpc.Settle()
	rpc.Send(map[string]any{"id": "2", "type": "prompt", "message": "/summarize"})
	if m := rpc.UI("notify"); !porttest.Contains(m, "may not call the model (grants.llm)") {
		t.Errorf("without the grant: %v", m)
	}
}
