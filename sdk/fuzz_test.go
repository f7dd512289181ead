package sdk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/abi"
)

// FuzzHandle feeds arbitrary requests to a registry with a tool and every
// kind of hook: the answer must always be one well-formed envelope, never a
// panic.
func FuzzHandle(f *testing.F) {
	for _, seed := range []string{
		`{"method":"init","params":{"abi":1,"cwd":"/p","config":{"a":1},"grants":{"fs":["ro:/p"]}}}`,
		`{"method":"tool.execute","params":{"toolName":"greet","toolCallId":"c","input":{"name":"x"},"cwd":"/p"}}`,
		`{"method":"tool.execute","params":{"toolName":"greet","input":{"name":"panic"}}}`,
		`{"method":"tool.execute","params":{"toolName":"greet","input":{"name":1}}}`,
		`{"method":"hook.tool_call","params":{"toolName":"write","toolCallId":"c","input":{"path":".env"}}}`,
		`{"method":"hook.tool_result","params":{"toolName":"read","content":[{"type":"text","text":"x"}],"details":{"k":[1,2]},"isError":false}}`,
		`{"method":"hook.bash_spawn","params":{"command":"ls","cwd":"/","env":{"A":"1"}}}`,
		`{"method":"event","params":{"type":"turn_end"}}`,
		`{"method":"nope"}`, `[]`, `null`, `{"method":"init","params":[1]}`, "",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, req []byte) {
		r := greeter()
		r.toolCall = append(r.toolCall, func(c ToolCall) ToolCallDecision {
			var in struct{ Path string }
			if c.DecodeInput(&in) == nil && strings.HasPrefix(in.Path, ".env") {
				return Deny("protected")
			}
			return ToolCallDecision{Input: json.RawMessage(`{"path":"ok"}`)}
		})
		r.toolResult = append(r.toolResult, func(res ToolResult) ResultPatch {
			return ResultPatch{Content: []Block{TextBlock(strings.ToUpper(res.Text()))}, Details: res.Details}
		})
		r.bashSpawn = append(r.bashSpawn, func(s BashSpawn) BashSpawn { s.Command += ";"; return s })
		r.events = append(r.events, func(e Event) { _ = e.Decode(new(map[string]any)) })
		out := r.handle(req)
		var env struct {
			OK     *bool           `json:"ok"`
			Result json.RawMessage `json:"result"`
			Error  *abi.Error      `json:"error"`
		}
		if err := json.Unmarshal(out, &env); err != nil {
			t.Fatalf("answer %q is not JSON: %v", out, err)
		}
		switch {
		case env.OK == nil:
			t.Fatalf("answer %s has no ok", out)
		case *env.OK && (env.Error != nil || len(env.Result) == 0):
			t.Fatalf("ok answer %s without a result", out)
		case !*env.OK && (env.Error == nil || env.Error.Message == ""):
			t.Fatalf("failed answer %s without a message", out)
		}
	})
}
