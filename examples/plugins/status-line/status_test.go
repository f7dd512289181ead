//go:build !wasip1

package main

import (
	"os"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestStatusLine: through pi's RPC mode, the status goes Ready, turn 1
// working, turn 1 complete, turn 2 ..., as the reference's RPC client
// sees setStatus requests (key NAME:KEY, the spans joined).
func TestStatusLine(t *testing.T) {
	p := porttest.New(t, "status-line", porttest.Build(t, "."), "")
	rpc := p.RPC(p.Script(`[{"toolCalls":[{"name":"ls","arguments":{}}]},{"text":"done"}]`)...)
	want := []string{"Ready", "● Turn 1...", "✓ Turn 1 complete", "● Turn 2...", "✓ Turn 2 complete"}
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "list"})
	for _, w := range want {
		m := rpc.UI("setStatus")
		if m["statusKey"] != "status-line:status-demo" || m["statusText"] != w {
			t.Fatalf("setStatus %v, want %q", m, w)
		}
	}
	rpc.Idle()
}
