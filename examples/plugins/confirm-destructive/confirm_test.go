//go:build !wasip1

package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestConfirmDestructive: in pi's TUI (tmux), /new asks first; "n"
// cancels the new session (pi says which extension did), "y" lets it
// start.
func TestConfirmDestructive(t *testing.T) {
	p := porttest.New(t, "confirm-destructive", porttest.Build(t, "."), "")
	tui := p.TUI(t, p.Script(`[{"text":"FIRST ANSWER"}]`)...)
	tui.Line("hello")
	tui.WaitFor("FIRST ANSWER")
	tui.Line("/new")
	tui.WaitFor("[confirm-destructive] Clear session?")
	tui.Keys("n")
	tui.WaitFor("[confirm-destructive] Clear cancelled")
	tui.WaitFor("new session cancelled by extension confirm-destructive: Clear cancelled by the person")
	tui.Line("/new")
	tui.WaitCount("[confirm-destructive] Clear session?", 2)
	tui.Keys("y")
	tui.WaitFor("[confirm-destructive] Clear session? → yes", "✓ new session")
}

// TestConfirmDestructiveRPC: over RPC the question reaches the client
// while new_session waits for the hook, and the client's answer reaches
// the hook: "no" makes new_session answer cancelled, "yes" lets it
// through.
func TestConfirmDestructiveRPC(t *testing.T) {
	p := porttest.New(t, "confirm-destructive", porttest.Build(t, "."), "")
	rpc := p.RPC(p.Script(`[{"text":"FIRST ANSWER"}]`)...)
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "hello"})
	rpc.Idle()
	rpc.Settle()
	for i, answer := range []bool{false, true} {
		id := fmt.Sprintf("new-%d", i)
		rpc.Send(map[string]any{"id": id, "type": "new_session"})
		q := rpc.UI("confirm")
		if q["title"] != "[confirm-destructive] Clear session?" {
			t.Errorf("question: %v", q)
		}
		rpc.Send(map[string]any{"type": "extension_ui_response", "id": q["id"], "confirmed": answer})
		r := rpc.Response(id)
		d, _ := r["data"].(map[string]any)
		if r["success"] != true || d["cancelled"] != !answer {
			t.Errorf("answer %v: new_session %v", answer, r)
		}
	}
}
