//go:build !wasip1

package main

import (
	"os"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestTimedDialogs: through RPC (the reference's extension_ui_request
// shapes, timeout in ms), a select answered, a select cancelled, and a
// confirm left alone until it times out; with -p nobody can answer.
func TestTimedDialogs(t *testing.T) {
	p := porttest.New(t, "timed-confirm", porttest.Build(t, "."), "")
	rpc := p.RPC(p.Script(`[]`)...)
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "/timed-select"})
	q := rpc.UI("select")
	// timeout: what is left of the 10 s when the request is written.
	if ms, _ := q["timeout"].(float64); q["title"] != "[timed-confirm] Pick an option" || ms <= 9000 || ms > 10000 || !porttest.Contains(q["options"], `["Option A","Option B","Option C"]`) {
		t.Errorf("select %v", q)
	}
	rpc.Send(map[string]any{"type": "extension_ui_response", "id": q["id"], "value": "Option B"})
	if m := rpc.UI("notify"); m["message"] != "Selected: Option B" {
		t.Errorf("answered: %v", m)
	}
	rpc.Settle()
	rpc.Send(map[string]any{"id": "2", "type": "prompt", "message": "/timed-select"})
	q = rpc.UI("select")
	rpc.Send(map[string]any{"type": "extension_ui_response", "id": q["id"], "cancelled": true})
	if m := rpc.UI("notify"); m["message"] != "Selection cancelled (cancelled)" {
		t.Errorf("cancelled: %v", m)
	}
	rpc.Settle()
	rpc.Send(map[string]any{"id": "3", "type": "prompt", "message": "/timed"})
	if q := rpc.UI("confirm"); q["timeout"].(float64) <= 4000 || q["timeout"].(float64) > 5000 {
		t.Errorf("confirm %v", q)
	}
	if m := rpc.UI("notify"); m["message"] != "Dialog timed out (auto-cancelled)" {
		t.Errorf("left alone: %v", m)
	}

	if out, stderr, code := p.Run("", "-p", "/timed", p.Script(`[]`)[0], p.Script(`[]`)[1]); code != 0 || out != "Nobody can answer here\n" {
		t.Errorf("-p /timed: exit %d, %q %s", code, out, stderr)
	}
}
