//go:build !wasip1

package main

import (
	"os"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestQuit: /quit-now in pi's TUI (tmux) ends pi with exit status 0.
func TestQuit(t *testing.T) {
	p := porttest.New(t, "shutdown-command", porttest.Build(t, "."), "")
	tui := p.TUI(t)
	tui.Line("/quit-now")
	tui.WaitFor("PI-EXIT=0")
}
