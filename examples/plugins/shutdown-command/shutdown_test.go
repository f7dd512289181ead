//go:build !wasip1

package main

import (
	"os"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestQuit: /quit-now in RPC mode ends pi with exit status 0 while its
// input is still open, after the session_shutdown of a normal end.
func TestQuit(t *testing.T) {
	p := porttest.New(t, "shutdown-command", porttest.Build(t, "."), "")
	rpc := p.RPC(p.Script(`[]`)...)
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "/quit-now"})
	if m := rpc.UI("notify"); m["message"] != "Goodbye." {
		t.Errorf("notify %v", m)
	}
	if code := rpc.Wait(); code != 0 {
		t.Errorf("exit %d\n%s", code, rpc.Stderr())
	}
}
