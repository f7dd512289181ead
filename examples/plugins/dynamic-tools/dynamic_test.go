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

// TestDynamicTools: echo_session exists once the session started, a tool
// added by /add-echo-tool reaches the model's next request, and calling
// it runs the extension's handler.
func TestDynamicTools(t *testing.T) {
	p := porttest.New(t, "dynamic-tools", porttest.Build(t, "."), "")
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "shout", Arguments: `{"message":"hi <there>"}`}, {Name: "echo_session", Arguments: `{"message":"x"}`}}},
		openai.Reply{Text: "done"})
	rpc := p.RPC("--base-url", srv.URL, "--model", "M", "--api-key", "k")
	if m := rpc.UI("notify"); m["message"] != "[dynamic-tools] Registered dynamic tool: echo_session" {
		t.Errorf("start: %v", m)
	}
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "/add-echo-tool Shout"})
	if m := rpc.UI("notify"); m["message"] != "Registered dynamic tool: shout" {
		t.Errorf("/add-echo-tool: %v", m)
	}
	rpc.Settle()
	rpc.Send(map[string]any{"id": "2", "type": "prompt", "message": "/add-echo-tool bad-name"})
	if m := rpc.UI("notify"); m["message"] != "Usage: /add-echo-tool <tool_name> (lowercase, numbers, underscores)" {
		t.Errorf("bad name: %v", m)
	}
	rpc.Settle()
	rpc.Send(map[string]any{"id": "3", "type": "prompt", "message": "shout hi"})
	rpc.Idle()
	reqs := srv.Requests()
	if len(reqs) != 2 || !porttest.Contains(reqs[0]["tools"], `"name":"shout"`) || !porttest.Contains(reqs[0]["tools"], `"name":"echo_session"`) {
		t.Fatalf("tools offered: %v", reqs)
	}
	if !porttest.Contains(reqs[1]["messages"], `[shout] hi \u003cthere\u003e`) || !porttest.Contains(reqs[1]["messages"], `[echo_session] x`) {
		t.Errorf("tool results: %v", reqs[1]["messages"])
	}
}
