package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

func noopTool() tool.ToolDefinition {
	return tool.ToolDefinition{
		Name:        "noop",
		Description: "Does nothing.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		Execute: func(context.Context, tool.Call, tool.Context) (tool.Result, error) {
			return tool.TextResult("ok"), nil
		},
	}
}

// BenchmarkLoopToolCall measures what the loop adds around a tool call: one
// run is a turn of `calls` calls of a tool that does nothing, then a final
// text turn, with the scripted provider. ns/call is the time per tool call.
func BenchmarkLoopToolCall(b *testing.B) {
	for _, bc := range []struct {
		calls      int
		sequential bool
		jsonEvents bool
	}{
		{1, false, false},
		{10, false, false},
		{10, true, false},
		{10, false, true},
	} {
		name := fmt.Sprintf("calls=%d/sequential=%v/json-events=%v", bc.calls, bc.sequential, bc.jsonEvents)
		b.Run(name, func(b *testing.B) {
			var calls []llm.ScriptToolCall
			for i := range bc.calls {
				calls = append(calls, call("noop", fmt.Sprintf(`{"n":%d}`, i)))
			}
			s := llm.Script{Turns: []llm.ScriptTurn{{ToolCalls: calls}, {Text: "done"}}}
			tools := wrap(b, noopTool())
			var onEvent func(agent.Event)
			if bc.jsonEvents {
				enc := json.NewEncoder(io.Discard)
				onEvent = func(e agent.Event) { _ = enc.Encode(e) }
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				a := agent.New(agent.Config{Provider: llm.NewScripted(s), Tools: tools, Sequential: bc.sequential, OnEvent: onEvent})
				if _, err := a.Run(ctx, "go"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*bc.calls), "ns/call")
		})
	}
}

// BenchmarkBashBatch runs a turn of 4 real bash calls (`sleep 0.05`) in
// parallel and in sequence: what parallel execution buys for tools that wait.
func BenchmarkBashBatch(b *testing.B) {
	for _, sequential := range []bool{false, true} {
		b.Run(fmt.Sprintf("sequential=%v", sequential), func(b *testing.B) {
			var calls []llm.ScriptToolCall
			for range 4 {
				calls = append(calls, call("bash", `{"command":"sleep 0.05"}`))
			}
			s := llm.Script{Turns: []llm.ScriptTurn{{ToolCalls: calls}, {Text: "done"}}}
			tools := wrap(b, builtinDefs(b, "bash")...)
			ctx := context.Background()
			for b.Loop() {
				a := agent.New(agent.Config{Provider: llm.NewScripted(s), Tools: tools, Sequential: sequential})
				res, err := a.Run(ctx, "go")
				if err != nil {
					b.Fatal(err)
				}
				for _, m := range toolResults(res.Messages) {
					if m.IsError {
						b.Fatalf("bash failed: %s", text(m))
					}
				}
			}
		})
	}
}
