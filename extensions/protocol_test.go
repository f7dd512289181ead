package extensions

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDecodeInit11: the 1.1 fields of init's answer are checked.
func TestDecodeInit11(t *testing.T) {
	base := `{"name":"x","version":"1","tools":[],"hooks":[]`
	for _, tc := range []struct{ extra, want string }{
		{`,"commands":[{"name":"todo","description":"d"}]`, ""},
		{`,"commands":[{"name":"Todo","description":"d"}]`, `name "Todo" must match [a-z][a-z0-9-]*`},
		{`,"commands":[{"name":"/todo","description":"d"}]`, `must match`},
		{`,"commands":[{"name":"to_do","description":"d"}]`, `must match`},
		{`,"commands":[{"name":"a","description":"d"},{"name":"a","description":"e"}]`, "command /a declared twice"},
		{`,"commands":[{"name":"help","description":"d"}]`, "command /help clashes with the built-in command /help"},
		{`,"commands":[{"name":"permissions","description":"d"}]`, "clashes with the built-in command /permissions"},
		{`,"commands":[{"name":"a"}]`, ""},
		{`,"events":["message_end","agent_end"]`, ""},
		{`,"events":["message_update"]`, `unknown event type "message_update"`},
		{`,"configSchema":{"type":"object"}`, ""},
		{`,"configSchema":[1]`, "configSchema must be a JSON Schema object"},
		{`,"configSchema":{"type":"nope"}`, "configSchema"},
		{`,"hooks":["input","before_agent_start","stop"]`, ""}, // the later "hooks" wins
		{`,"commandz":[]`, `unknown field "commandz"`},
	} {
		raw := base + tc.extra + "}"
		_, err := decodeInit(json.RawMessage(raw))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.extra, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.extra, err, tc.want)
		}
	}
}

// TestToolCallAnswerIsOneOf: ask goes alone; with block or input the
// answer is malformed (a fault: the call is blocked).
func TestToolCallAnswerIsOneOf(t *testing.T) {
	for _, raw := range []string{`{"ask":"q","block":true}`, `{"ask":"q","input":{"a":1}}`, `{"ask":1}`} {
		if _, err := decodeToolCall(json.RawMessage(raw)); err == nil {
			t.Errorf("%s decoded", raw)
		}
	}
	d, err := decodeToolCall(json.RawMessage(`{"ask":"may I?"}`))
	if err != nil || d.Ask != "may I?" || d.Block || d.Input != nil {
		t.Errorf("ask = %+v, %v", d, err)
	}
	// A 1.0 answer keeps its meaning: input is ignored when blocking.
	d, err = decodeToolCall(json.RawMessage(`{"block":true,"input":{"a":1}}`))
	if err != nil || !d.Block || d.Input != nil {
		t.Errorf("block+input = %+v, %v", d, err)
	}
}
