//go:build !wasip1

package main

import (
	"os"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestConfirmDestructive: through RPC, a new session is asked about; a
// "no" answers new_session with cancelled: true and keeps the session, a
// "yes" lets it through.
func TestConfirmDestructive(t *testing.T) {
	p := porttest.New(t, "confirm-destructive", porttest.Build(t, "."), "")
	rpc := p.RPC(p.Script(`[{"text":"hi"}]`)...)
	rpc.Send(map[string]any{"id": "0", "type": "prompt", "message": "hello"})
	rpc.Idle()
	rpc.Send(map[string]any{"id": "1", "type": "get_state"})
	before := rpc.Response("1")["data"].(map[string]any)["sessionId"]

	rpc.Send(map[string]any{"id": "2", "type": "new_session"})
	q := rpc.UI("confirm")
	if q["title"] != "[confirm-destructive] Clear session?" {
		t.Errorf("confirm %v", q)
	}
	rpc.Send(map[string]any{"type": "extension_ui_response", "id": q["id"], "confirmed": false})
	if m := rpc.UI("notify"); m["message"] != "[confirm-destructive] Clear cancelled" {
		t.Errorf("notify %v", m)
	}
	if r := rpc.Response("2"); !porttest.Contains(r, `"cancelled":true`) {
		t.Errorf("new_session answered %v", r)
	}
	rpc.Send(map[string]any{"id": "3", "type": "get_state"})
	if id := rpc.Response("3")["data"].(map[string]any)["sessionId"]; id != before {
		t.Errorf("the session changed: %v -> %v", before, id)
	}

	rpc.Send(map[string]any{"id": "4", "type": "new_session"})
	q = rpc.UI("confirm")
	rpc.Send(map[string]any{"type": "extension_ui_response", "id": q["id"], "confirmed": true})
	if r := rpc.Response("4"); !porttest.Contains(r, `"cancelled":false`) {
		t.Errorf("new_session answered %v\nseen %v", r, rpc.Seen)
	}
	rpc.Send(map[string]any{"id": "5", "type": "get_state"})
	if id := rpc.Response("5")["data"].(map[string]any)["sessionId"]; id == before {
		t.Errorf("the session did not change")
	}
}
