package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
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

// write20MB returns 20 MB of file content (lines with the tabs and quotes
// JSON escapes) and the write call's arguments for it, as a model sends
// them (compact JSON).
func write20MB(path string) (content string, args []byte) {
	var b strings.Builder
	for i := 0; b.Len() < 20_000_000; i++ {
		fmt.Fprintf(&b, "%08d\tfunc \"quoted\" %s\n", i, strings.Repeat("x", 60))
	}
	content = b.String()[:20_000_000]
	args, _ = json.Marshal(map[string]string{"path": path, "content": content})
	return content, args
}

// BenchmarkLoopWrite20MB is a 20 MB write through the whole loop — the
// provider assembling the call, the events, validation, the tool — with
// the scripted provider and with the OpenAI provider over loopback HTTP
// (the arguments in 1000 chunks, as a server streams them; the next
// request sends them back). alloc/payload is the bytes allocated per run
// over the content's size: the copies of the arguments on their way.
// (cmd/pi's BenchmarkLoopWrite20MBProcess measures a pi process's peak
// RSS.)
func BenchmarkLoopWrite20MB(b *testing.B) {
	for _, provider := range []string{"scripted", "openai"} {
		b.Run("provider="+provider, func(b *testing.B) {
			defs := builtinDefs(b, "write")
			tools := wrap(b, defs...)
			path := filepath.Join(b.TempDir(), "out.txt")
			content, args := write20MB(path)
			var newProvider func() llm.Provider
			switch provider {
			case "scripted":
				s := llm.Script{Turns: []llm.ScriptTurn{{ToolCalls: []llm.ScriptToolCall{{Name: "write", Arguments: args}}}, {Text: "done"}}}
				newProvider = func() llm.Provider { return llm.NewScripted(s) }
			case "openai":
				srv := openai.NewServer(b)
				srv.ForgetBodies()
				p := openAI(b, srv)
				newProvider = func() llm.Provider {
					srv.Add(openai.Reply{Chunks: 1000, ToolCalls: []openai.ToolCall{{Name: "write", Arguments: string(args)}}}, openai.Reply{Text: "done"})
					return p
				}
			}
			ctx := context.Background()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for b.Loop() {
				a := agent.New(agent.Config{Provider: newProvider(), Tools: tools})
				res, err := a.Run(ctx, "go")
				if err != nil {
					b.Fatal(err)
				}
				if r := toolResults(res.Messages); len(r) != 1 || r[0].IsError {
					b.Fatalf("write failed: %+v", r)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			got, err := os.ReadFile(path)
			if err != nil || string(got) != content {
				b.Fatalf("the file is not the content (%v)", err)
			}
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(content)), "alloc/payload")
		})
	}
}
