//go:build !wasip1

package main

import (
	"os"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestBookmark: through pi's RPC mode, /bookmark labels the assistant's
// last message (the label reaches the session's tree), /unbookmark
// removes it.
func TestBookmark(t *testing.T) {
	p := porttest.New(t, "bookmark", porttest.Build(t, "."), "")
	rpc := p.RPC(p.Script(`[{"text":"first answer"}]`)...)
	rpc.Send(map[string]any{"id": "0", "type": "prompt", "message": "/bookmark"})
	if m := rpc.UI("notify"); m["message"] != "No assistant message to bookmark" {
		t.Errorf("empty: %v", m)
	}
	rpc.Settle()
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "hello"})
	rpc.Idle()
	rpc.Settle()
	rpc.Send(map[string]any{"id": "2", "type": "prompt", "message": "/bookmark the answer"})
	if m := rpc.UI("notify"); m["message"] != "Bookmarked as: the answer" {
		t.Errorf("bookmark: %v", m)
	}
	rpc.Settle()
	rpc.Send(map[string]any{"id": "3", "type": "get_tree"})
	if !porttest.Contains(rpc.Response("3"), `"label":"the answer"`) {
		t.Errorf("the tree has no label: %v", rpc.Seen[len(rpc.Seen)-1])
	}
	rpc.Send(map[string]any{"id": "4", "type": "prompt", "message": "/unbookmark"})
	if m := rpc.UI("notify"); m["message"] != "Removed bookmark: the answer" {
		t.Errorf("unbookmark: %v", m)
	}
	rpc.Settle()
	rpc.Send(map[string]any{"id": "5", "type": "prompt", "message": "/unbookmark"})
	if m := rpc.UI("notify"); m["message"] != "No bookmarked entry found" {
		t.Errorf("unbookmark again: %v", m)
	}
}
