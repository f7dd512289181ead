//go:build !wasip1

package main

import (
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
