//go:build !wasip1

package main

import (
	"os"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestStatusMessage: /status adds a displayed custom message with the
// level in its details, which the conversation (RPC get_messages) holds.
func TestStatusMessage(t *testing.T) {
	p := porttest.New(t, "message-renderer", porttest.Build(t, "."), "")
	rpc := p.RPC(p.Script(`[]`)...)
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "/status warn disk <almost> full"})
	rpc.Settle()
	rpc.Send(map[string]any{"id": "2", "type": "get_messages"})
	r := rpc.Response("2")
	for _, want := range []string{`"customType":"status-update"`, `"content":"disk \u003calmost\u003e full"`, `"level":"warn"`, `"display":true`} {
		if !porttest.Contains(r, want) {
			t.Errorf("messages lack %s: %v", want, r)
		}
	}
}
