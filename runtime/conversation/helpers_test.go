package conversation

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/pi-go/pi/internal/testkit/mcpserver"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
)

// TestMain makes the test binary a child subreaper, as pi's main does (a
// program that embeds runtimes should), and runs the tests.
func TestMain(m *testing.M) {
	if err := app.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := plugin.Main(m)
	mcpserver.Cleanup()
	os.Exit(code)
}

// testKey is the API key of the tests' model: what is recorded and sent
// on must have it redacted.
const testKey = "sk-test-key-0123456789"

// openRT opens a runtime, closed when the test ends.
func openRT(t *testing.T, o app.Options) *app.Runtime {
	t.Helper()
	rt, err := app.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// open holds a conversation on rt, closed when the test ends (before the
// runtime).
func open(t *testing.T, rt *app.Runtime, o Options) *Conversation {
	t.Helper()
	c, err := New(rt, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// openSession opens a runtime in dir on the OpenAI-wire server at url
// (model "m", key testKey) and a conversation on it with a session in
// sessDir as so says; o gives the rest of the conversation's options.
func openSession(t *testing.T, dir, home, sessDir, url string, so SessionOptions, o Options) *Conversation {
	t.Helper()
	so.Dir = sessDir
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Model: app.ModelOptions{Name: "m", BaseURL: url, APIKey: testKey}})
	o.Session = &so
	return open(t, rt, o)
}

// submit sends text to the model as a prompt (no commands, no Show).
func submit(t *testing.T, c *Conversation, text string) (*agent.RunResult, error) {
	t.Helper()
	s, err := c.Submit(context.Background(), Prompt{Text: text}, SubmitOptions{})
	return s.Result, err
}

// eventLog records the events of a conversation.
type eventLog struct {
	mu     sync.Mutex
	events []agent.Event
}

func (l *eventLog) add(ev agent.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

func (l *eventLog) of(t agent.EventType) []agent.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []agent.Event
	for _, ev := range l.events {
		if ev.Type == t {
			out = append(out, ev)
		}
	}
	return out
}

// wireTexts flattens the messages of a request body: "role: text".
func wireTexts(body map[string]any) []string {
	var out []string
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm := m.(map[string]any)
		text := ""
		switch c := mm["content"].(type) {
		case string:
			text = c
		case []any:
			for _, p := range c {
				if s, ok := p.(map[string]any)["text"].(string); ok {
					text += s
				}
			}
		}
		if calls, ok := mm["tool_calls"].([]any); ok {
			for _, c := range calls {
				f := c.(map[string]any)["function"].(map[string]any)
				text += fmt.Sprintf("[call %v %v]", f["name"], f["arguments"])
			}
		}
		out = append(out, fmt.Sprintf("%v: %s", mm["role"], text))
	}
	return out
}

// scripted returns a provider that answers the turns, each a text.
func scripted(t *testing.T, turns ...string) *llm.Scripted {
	t.Helper()
	var s llm.Script
	for _, x := range turns {
		s.Turns = append(s.Turns, llm.ScriptTurn{Text: x})
	}
	return llm.NewScripted(s)
}

// userTexts are the texts of the user messages.
func userTexts(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == llm.RoleUser {
			for _, c := range m.Content {
				out = append(out, c.Text)
			}
		}
	}
	return out
}
