//go:build !wasip1

package main

import (
	"os"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestWidgets: the RPC client gets both widgets with their placements
// when pi starts, and again for a new session.
func TestWidgets(t *testing.T) {
	p := porttest.New(t, "widget-placement", porttest.Build(t, "."), "")
	rpc := p.RPC(p.Script(`[]`)...)
	check := func() {
		t.Helper()
		got := map[string]string{}
		for len(got) < 2 {
			m := rpc.UI("setWidget")
			lines, _ := m["widgetLines"].([]any)
			if len(lines) != 1 {
				t.Fatalf("setWidget %v", m)
			}
			got[m["widgetKey"].(string)] = m["widgetPlacement"].(string) + ": " + lines[0].(string)
		}
		if got["widget-placement:widget-above"] != "aboveEditor: Above editor widget" || got["widget-placement:widget-below"] != "belowEditor: Below editor widget" {
			t.Errorf("widgets %v", got)
		}
	}
	check()
	rpc.Send(map[string]any{"id": "1", "type": "new_session"})
	check()
}
