// Command mksession writes a session file as pi writes it, through
// runtime/session: N entries in turns of a user prompt, an assistant tool
// call, its result and an answer, ~500 bytes a line with varied words, for
// bench/session.sh.
//
// Usage: mksession FILE ENTRIES
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

var words = strings.Fields("the a func return value error file line test build session entry message tool call result answer context model token read write edit bash grep find package import struct field method type string byte slice map channel")

// text returns about n bytes of words, different for each seed.
func text(seed, n int) string {
	var b strings.Builder
	x := uint32(seed*2654435761 + 1)
	for b.Len() < n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b.WriteString(words[x%uint32(len(words))])
		b.WriteByte(' ')
	}
	return b.String()
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mksession FILE ENTRIES")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "mksession: entries:", err)
		os.Exit(2)
	}
	s, err := session.Create(session.CreateOptions{Cwd: "/bench", Path: os.Args[1]})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mksession:", err)
		os.Exit(1)
	}
	defer s.Close()
	meta := session.AssistantMeta{API: "openai-completions", Provider: "bench", Model: "m",
		Usage: llm.Usage{InputTokens: 1200, OutputTokens: 80, TotalTokens: 1280}, StopReason: llm.StopToolUse}
	for i := range n {
		var m session.Message
		switch i % 4 {
		case 0:
			m = session.Message{Role: session.RoleUser, Content: []session.Block{{Type: "text", Text: text(i, 150)}}}
		case 1:
			m = session.FromLLM(llm.Message{Role: llm.RoleAssistant, Content: nil, ToolCalls: []llm.ToolCall{{
				ID: fmt.Sprintf("call_%d", i), Name: "read", Arguments: llm.RawArguments(fmt.Sprintf(`{"path":"pkg/file%d.go"}`, i)),
			}}}, meta)
		case 2:
			m = session.Message{Role: session.RoleToolResult, ToolCallID: fmt.Sprintf("call_%d", i-1), ToolName: "read",
				Content: []session.Block{{Type: "text", Text: text(i, 400)}}}
		case 3:
			end := meta
			end.StopReason = llm.StopEnd
			m = session.FromLLM(llm.Message{Role: llm.RoleAssistant, Content: []content.Block{content.Text(text(i, 100))}}, end)
		}
		if _, err := s.AppendMessage(m); err != nil {
			fmt.Fprintln(os.Stderr, "mksession:", err)
			os.Exit(1)
		}
	}
}
