package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
)

// turnsConversation returns the turns of an n-turn conversation: n-1 turns
// of a short text and a read of a 32 KB file, then a final text; and the
// directory the file is in.
func turnsConversation(tb testing.TB, n int) (dir string, text string, args []byte) {
	dir = tb.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 32<<10; i++ {
		fmt.Fprintf(&b, "%05d\tfunc f%d() { return \"quoted\" } // a line of code\n", i, i)
	}
	path := filepath.Join(dir, "file.go")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	args, _ = json.Marshal(map[string]string{"path": path})
	text = strings.Repeat("Let me read the file to see what it does. ", 8)
	return dir, text, args
}

// BenchmarkTurns is an n-turn conversation through the loop — each turn
// the model says a sentence and reads a 32 KB file, the last turn answers
// — with the scripted provider and the OpenAI provider over loopback HTTP
// (the text and the call in 50 chunks each). Each request over HTTP sends
// the whole history back, so its cost grows with the turns.
func BenchmarkTurns(b *testing.B) {
	for _, n := range []int{3, 20, 60} {
		for _, provider := range []string{"scripted", "openai"} {
			b.Run(fmt.Sprintf("turns=%d/provider=%s", n, provider), func(b *testing.B) {
				tools := wrap(b, builtinDefs(b, "read")...)
				_, text, args := turnsConversation(b, n)
				var newProvider func() llm.Provider
				switch provider {
				case "scripted":
					var s llm.Script
					for range n - 1 {
						s.Turns = append(s.Turns, llm.ScriptTurn{Text: text, ToolCalls: []llm.ScriptToolCall{{Name: "read", Arguments: args}}})
					}
					s.Turns = append(s.Turns, llm.ScriptTurn{Text: "done"})
					newProvider = func() llm.Provider { return llm.NewScripted(s) }
				case "openai":
					srv := openai.NewServer(b)
					srv.ForgetBodies()
					p := openAI(b, srv)
					newProvider = func() llm.Provider {
						for range n - 1 {
							srv.Add(openai.Reply{Chunks: 50, Text: text, ToolCalls: []openai.ToolCall{{Name: "read", Arguments: string(args)}}})
						}
						srv.Add(openai.Reply{Text: "done"})
						return p
					}
				}
				ctx := context.Background()
				for b.Loop() {
					a := agent.New(agent.Config{Provider: newProvider(), Tools: tools, SystemPrompt: "You are a coding agent."})
					res, err := a.Run(ctx, "go")
					if err != nil {
						b.Fatal(err)
					}
					if r := toolResults(res.Messages); len(r) != n-1 || r[0].IsError {
						b.Fatalf("reads: %d, want %d", len(r), n-1)
					}
				}
			})
		}
	}
}
