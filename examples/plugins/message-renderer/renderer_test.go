//go:build !wasip1

package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestStatusMessage: /status adds a displayed custom_message entry with
// the level in its details to the session file, and the model sees it
// with the next prompt.
func TestStatusMessage(t *testing.T) {
	p := porttest.New(t, "message-renderer", porttest.Build(t, "."), "")
	rpc := p.RPC(p.Script(`[{"text":"ok"}]`)...)
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "/status warn disk <almost> full"})
	// The stream carries it as the reference does: message_start and
	// message_end with the custom message.
	for _, typ := range []string{"message_start", "message_end"} {
		ev := rpc.Until(typ+" of the custom message", func(ev map[string]any) bool {
			m, _ := ev["message"].(map[string]any)
			return ev["type"] == typ && m["role"] == "custom"
		})
		m := ev["message"].(map[string]any)
		details, _ := m["details"].(map[string]any)
		if m["customType"] != "status-update" || m["content"] != "disk <almost> full" || m["display"] != true || details["level"] != "warn" || m["timestamp"] == nil {
			t.Errorf("%s: %v", typ, ev)
		}
	}
	rpc.Settle()
	rpc.Send(map[string]any{"id": "2", "type": "prompt", "message": "next"})
	rpc.Idle()
	rpc.Send(map[string]any{"id": "3", "type": "get_state"})
	file, _ := rpc.Response("3")["data"].(map[string]any)["sessionFile"].(string)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var entry map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `"custom_message"`) {
			json.Unmarshal([]byte(line), &entry)
		}
	}
	for _, want := range []string{`"customType":"status-update"`, `"content":"disk \u003calmost\u003e full"`, `"level":"warn"`, `"display":true`} {
		if !porttest.Contains(entry, want) {
			t.Errorf("the custom_message entry lacks %s: %v\n%s", want, entry, b)
		}
	}
	rpc.Send(map[string]any{"id": "4", "type": "get_messages"})
	if r := rpc.Response("4"); !porttest.Contains(r, "almost") {
		t.Errorf("the conversation lacks the message: %v", r)
	}
}
