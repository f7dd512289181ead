package pitest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/app/pitest"
)

// Without a conversation (tool mode, as pi tool call) session.append and
// session.entries keep entries in memory and ABI 1.2's session.* answer
// "not available in mode tool"; with Options.Converse the extension gets
// a session in memory, its commands run, and the runs it asks for finish
// before Prompt returns.
func TestSessionInMemory(t *testing.T) {
	wasm := pitest.BuildGo(t, "../../../extensions/testdata/guests/conv12/a")
	pi := pitest.Load(t, pitest.Extension{Path: wasm})
	if got := pi.MustCall("conv12_call", map[string]any{"method": "session.append", "params": map[string]any{"customType": "n", "data": 7}}); !strings.Contains(got, `"id"`) {
		t.Fatalf("session.append = %s", got)
	}
	if got := pi.MustCall("conv12_call", map[string]any{"method": "session.entries", "params": map[string]any{}}); !strings.Contains(got, `"customType":"n","data":7`) {
		t.Errorf("session.entries = %s", got)
	}
	for _, m := range []string{"session.info", "agent.state"} {
		if got := pi.MustCall("conv12_call", map[string]any{"method": m}); got != `{"error":"`+m+`: not available in mode tool"}` {
			t.Errorf("%s in tool mode = %s", m, got)
		}
	}

	pi = pitest.New(t, pitest.Options{Converse: []string{"answered"}}, pitest.Extension{Path: wasm})
	shown, _ := pi.Prompt("/conv12-typed info")
	var info struct{ SessionID, SessionFile string }
	if err := json.Unmarshal([]byte(shown), &info); err != nil || info.SessionID == "" || info.SessionFile != "" {
		t.Errorf("info = %s (%v): a session in memory has no file", shown, err)
	}
	pi.Prompt("/conv12-typed send from the extension")
	msgs := pi.Conversation().Messages()
	if len(msgs) != 2 || msgs[0].Content[0].Text != "from the extension" || msgs[1].Content[0].Text != "answered" {
		t.Errorf("the extension's run: %+v", msgs)
	}
}
