package builtin

import (
	"encoding/json"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

// FuzzToolArguments feeds any argument text to every built-in tool's
// prepareArguments and schema validation (what the loop runs before a tool
// executes): neither may panic, and arguments that pass are a JSON object.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `[]`, `"x"`, `{"path":"a"}`, `{"path":1}`, `{"path":"a","content":null}`,
		`{"path":"a","edits":"[{\"oldText\":\"a\",\"newText\":\"b\"}]"}`,
		`{"path":"a","oldText":"x","newText":"y"}`, `{"path":"a","edits":{"oldText":"x","newText":"y"}}`,
		`{"path":"a","edits":"not json"}`, `{"command":"ls","timeout":-1}`, `{"pattern":"(","limit":1e99}`,
		`{"path":"a","offset":0,"limit":-5}`, "{\"path\":\"\xff\"}", `{"a":{"b":{"c":[[[[]]]]}}}`,
	} {
		f.Add(s)
	}
	var tools []tool.AgentTool
	for _, d := range Definitions(Options{}) {
		t, err := tool.Wrap(d, nil)
		if err != nil {
			f.Fatal(err)
		}
		tools = append(tools, t)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, tl := range tools {
			args, err := tl.PrepareArguments(json.RawMessage(raw))
			if err != nil {
				continue
			}
			if tl.Validate(args) != nil {
				continue
			}
			var obj map[string]any
			if err := json.Unmarshal(args, &obj); err != nil {
				t.Fatalf("%s: arguments %q passed validation but are not a JSON object: %v", tl.Name(), args, err)
			}
		}
	})
}
