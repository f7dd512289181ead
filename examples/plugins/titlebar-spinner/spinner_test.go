//go:build !wasip1

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestSpinner: through RPC, the title gets the first frame when a run
// starts, any later frames from the timer, and the plain title when the
// run ends.
func TestSpinner(t *testing.T) {
	p := porttest.New(t, "titlebar-spinner", porttest.Build(t, "."), "")
	rpc := p.RPC(p.Script(`[{"text":"done"}]`)...)
	base := "π - " + filepath.Base(p.Dir)
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
	if m := rpc.UI("setTitle"); m["title"] != base {
		t.Errorf("first title %v, want the plain one (stop before start)", m)
	}
	if m := rpc.UI("setTitle"); m["title"] != "⠋ "+base {
		t.Errorf("start title %v", m)
	}
	for {
		m := rpc.UI("setTitle")
		title, _ := m["title"].(string)
		if title == base {
			break
		}
		if !strings.HasSuffix(title, " "+base) {
			t.Fatalf("title %q", title)
		}
	}
}
