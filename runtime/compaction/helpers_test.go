package compaction_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	openaitest "github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

func user(text string) session.Message {
	return session.Message{Role: session.RoleUser, Content: []session.Block{{Type: "text", Text: text}}}
}

func assistant(text string, calls ...session.Block) session.Message {
	m := session.Message{Role: session.RoleAssistant, API: "openai-completions", Provider: "p", Model: "m", StopReason: "stop", Usage: &session.Usage{}}
	if text != "" {
		m.Content = append(m.Content, session.Block{Type: "text", Text: text})
	}
	if len(calls) > 0 {
		m.Content = append(m.Content, calls...)
		m.StopReason = "toolUse"
	}
	return m
}

func call(id, name, args string) session.Block {
	return session.Block{Type: "toolCall", ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func result(id, name, text string) session.Message {
	return session.Message{Role: session.RoleToolResult, ToolCallID: id, ToolName: name, Content: []session.Block{{Type: "text", Text: text}}}
}

func mustAppend(t testing.TB, s *session.Session, m session.Message) string {
	t.Helper()
	id, err := s.AppendMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func newSession(t testing.TB) *session.Session {
	t.Helper()
	s, err := session.Create(session.CreateOptions{Cwd: "/work/proj", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// provider is the OpenAI-compatible provider talking to srv.
func provider(t *testing.T, srv *openaitest.Server) llm.Provider {
	t.Helper()
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL, Model: "summarizer"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// summaryRequest returns the system prompt and the one user message of a
// summarizing request, failing unless it is one (no tools, two messages).
func summaryRequest(t *testing.T, body map[string]any) (system, prompt string) {
	t.Helper()
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 2 || body["tools"] != nil {
		t.Fatalf("not a summarizing request: %v", body)
	}
	text := func(m any) string {
		switch c := m.(map[string]any)["content"].(type) {
		case string:
			return c
		case []any:
			var b strings.Builder
			for _, p := range c {
				if s, ok := p.(map[string]any)["text"].(string); ok {
					b.WriteString(s)
				}
			}
			return b.String()
		}
		return ""
	}
	if msgs[0].(map[string]any)["role"] != "system" || msgs[1].(map[string]any)["role"] != "user" {
		t.Fatalf("roles of the summarizing request: %v", msgs)
	}
	return text(msgs[0]), text(msgs[1])
}

// fileEntries reads a session file's entries (after the header) as JSON
// objects.
func fileEntries(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		if i > 0 {
			out = append(out, m)
		}
	}
	return out
}

func numbered(prefix string, n int) string { return fmt.Sprintf("%s%d", prefix, n) }
