//go:build !wasip1

package main

import (
	"os"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestSessionName: /session-name through pi's RPC mode names the session
// (get_state shows it) and shows the name back.
func TestSessionName(t *testing.T) {
	p := porttest.New(t, "session-name", porttest.Build(t, "."), "")
	rpc := p.RPC(p.Script(`[]`)...)
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "/session-name"})
	if m := rpc.UI("notify"); m["message"] != "No session name set" {
		t.Errorf("before: %v", m)
	}
	rpc.Settle() // the command's notice comes before the command ends
	rpc.Send(map[string]any{"id": "2", "type": "prompt", "message": "/session-name fix the parser"})
	if m := rpc.UI("notify"); m["message"] != "Session named: fix the parser" {
		t.Errorf("set: %v", m)
	}
	rpc.Settle()
	rpc.Send(map[string]any{"id": "3", "type": "get_state"})
	if d, _ := rpc.Response("3")["data"].(map[string]any); d["sessionName"] != "fix the parser" {
		t.Errorf("get_state: %v", d)
	}
	rpc.Send(map[string]any{"id": "4", "type": "prompt", "message": "/session-name"})
	if m := rpc.UI("notify"); m["message"] != "Session: fix the parser" {
		t.Errorf("after: %v", m)
	}
}
