//go:build !wasip1

package main

import (
	"os"
	"strings"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestSnakeInTheTUI plays in pi's real TUI (tmux): /snake opens the
// overlay, keys steer (each step drawn), running into the wall ends the
// game and the score is kept; q closes the overlay and leaves nothing on
// screen; a new game shows the best score read back from the session.
func TestSnakeInTheTUI(t *testing.T) {
	p := porttest.New(t, "snake", porttest.Build(t, "."), "")
	tui := p.TUI(t)
	tui.Line("/snake slow")
	tui.WaitFor("SNAKE", "score 0  best 0", "#   oo@")
	tui.Keys("n") // one step right
	tui.WaitFor("#    oo@")
	tui.Keys("Down", "n")
	tui.WaitFor("score 0")
	// Run into the right wall.
	tui.Keys("Right")
	for i := 0; i < 20; i++ {
		tui.Keys("n")
	}
	tui.WaitFor("GAME OVER")
	tui.Keys("q")
	s := tui.WaitGone("SNAKE")
	if strings.Contains(s, "GAME OVER") {
		t.Errorf("the overlay left lines behind:\n%s", s)
	}
	// In RPC there is no TUI: the command says so.
	rpc := p.RPC(p.Script(`[]`)...)
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "/snake"})
	if m := rpc.UI("notify"); m["message"] != "Snake needs pi's terminal UI." {
		t.Errorf("RPC: %v", m)
	}
}
