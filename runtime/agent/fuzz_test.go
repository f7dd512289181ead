package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// FuzzToolCallArguments sends any argument text the model might produce: the
// call always gets exactly one result, and every event still encodes as one
// line of valid JSON.
func FuzzToolCallArguments(f *testing.F) {
	for _, s := range []string{
		`{"ms":1}`, ``, `{`, `null`, `[]`, `"str"`, `123`, `{"ms":-1}`, `{"ms":1e400}`,
		`{"ms":1,"tag":"\ud800"}`, "{\"tag\":\"\xff\"}", `{"ms":1}{"ms":2}`, " \n\t",
	} {
		f.Add(s)
	}
	// The sleep tool's schema, without the sleep (the fuzzer finds big ms).
	echo := tool.ToolDefinition{
		Name:       "sleep",
		Parameters: json.RawMessage(sleepSchema),
		Execute: func(_ context.Context, c tool.Call, _ tool.Context) (tool.Result, error) {
			return tool.TextResult(string(c.Input)), nil
		},
	}
	tools := wrap(f, echo)
	f.Fuzz(func(t *testing.T, args string) {
		b, _ := json.Marshal(args)
		p := script(llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{{Name: "sleep", Arguments: b}}}, llm.ScriptTurn{Text: "ok"})
		var lines [][]byte
		a := agent.New(agent.Config{Provider: p, Tools: tools, OnEvent: func(e agent.Event) {
			line, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("%s event does not encode: %v", e.Type, err)
			}
			lines = append(lines, line)
		}})
		res, err := a.Run(context.Background(), "go")
		if err != nil {
			t.Fatal(err)
		}
		if rs := toolResults(res.Messages); len(rs) != 1 {
			t.Fatalf("%d results for one call", len(rs))
		}
		for _, l := range lines {
			if !json.Valid(l) {
				t.Fatalf("invalid JSON line %q", l)
			}
		}
	})
}
