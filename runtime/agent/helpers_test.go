package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// span is one execution of a test tool, as the tool itself recorded it.
type span struct {
	tool, tag  string
	start, end time.Time
	input      json.RawMessage
	cancelled  bool
}

// timeline collects the spans of test tools, in the order they ended, and
// counts tool_execution_end events when wired with watch.
type timeline struct {
	mu    sync.Mutex
	spans []span
	ends  int
}

// watch returns an OnEvent that counts tool_execution_end events for the
// "until" argument of sleepTool, then passes the event to next (if any).
func (tl *timeline) watch(next func(agent.Event)) func(agent.Event) {
	return func(e agent.Event) {
		if e.Type == agent.EventToolExecutionEnd {
			tl.mu.Lock()
			tl.ends++
			tl.mu.Unlock()
		}
		if next != nil {
			next(e)
		}
	}
}

func (tl *timeline) endEvents() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.ends
}

func (tl *timeline) add(s span) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.spans = append(tl.spans, s)
}

func (tl *timeline) byTag(t *testing.T) map[string]span {
	t.Helper()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	out := map[string]span{}
	for _, s := range tl.spans {
		out[s.tag] = s
	}
	return out
}

func (tl *timeline) len() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return len(tl.spans)
}

func overlaps(a, b span) bool { return a.start.Before(b.end) && b.start.Before(a.end) }

const sleepSchema = `{"type":"object","properties":{"ms":{"type":"integer","minimum":0},"tag":{"type":"string"},"terminate":{"type":"boolean"},"until":{"type":"integer"}},"required":["ms"],"additionalProperties":false}`

// sleepTool sleeps for ms milliseconds (or until ctx is done), sends one
// progress update, records its span and answers "TAG slept MSms". With
// "until": N it ends early, as soon as N tool_execution_end events were
// emitted (see timeline.watch): in a parallel batch that makes it outlast the
// others without depending on timing (run in sequence instead, it sleeps the
// full ms and overlaps nothing).
func sleepTool(name string, mode tool.ExecutionMode, tl *timeline) tool.ToolDefinition {
	return tool.ToolDefinition{
		Name:          name,
		Description:   "Sleeps for ms milliseconds.",
		Parameters:    json.RawMessage(sleepSchema),
		PromptSnippet: "Sleep for a while",
		ExecutionMode: mode,
		Execute: func(ctx context.Context, call tool.Call, _ tool.Context) (tool.Result, error) {
			var in struct {
				MS        int    `json:"ms"`
				Tag       string `json:"tag"`
				Terminate bool   `json:"terminate"`
				Until     int    `json:"until"`
			}
			if err := json.Unmarshal(call.Input, &in); err != nil {
				return tool.Result{}, err
			}
			s := span{tool: name, tag: in.Tag, start: time.Now(), input: call.Input}
			call.Update(tool.TextResult("sleeping " + in.Tag))
			timer := time.NewTimer(time.Duration(in.MS) * time.Millisecond)
			defer timer.Stop()
			poll := time.NewTicker(time.Millisecond)
			defer poll.Stop()
		wait:
			for {
				select {
				case <-timer.C:
					break wait
				case <-ctx.Done():
					s.cancelled = true
					break wait
				case <-poll.C:
					if in.Until > 0 && tl.endEvents() >= in.Until {
						break wait
					}
				}
			}
			s.end = time.Now()
			tl.add(s)
			if s.cancelled {
				return tool.Result{}, errors.New("Command aborted")
			}
			r := tool.TextResult(fmt.Sprintf("%s slept %dms", in.Tag, in.MS))
			r.Terminate = in.Terminate
			return r, nil
		},
	}
}

// wrap wraps test definitions into AgentTools.
func wrap(t testing.TB, defs ...tool.ToolDefinition) []tool.AgentTool {
	t.Helper()
	dir := t.TempDir()
	tools, err := tool.WrapAll(defs, func(string) tool.Context { return tool.Context{Cwd: dir} })
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// events records the events of a run.
type events struct {
	mu   sync.Mutex
	list []agent.Event
}

func (e *events) on(ev agent.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, ev)
}

func (e *events) all() []agent.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]agent.Event(nil), e.list...)
}

func (e *events) types() []agent.EventType {
	var out []agent.EventType
	for _, ev := range e.all() {
		out = append(out, ev.Type)
	}
	return out
}

func (e *events) ofType(typ agent.EventType) []agent.Event {
	var out []agent.Event
	for _, ev := range e.all() {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// call is a scripted tool call with JSON-object arguments.
func call(name, args string) llm.ScriptToolCall {
	return llm.ScriptToolCall{Name: name, Arguments: json.RawMessage(args)}
}

// rawCall is a scripted tool call whose argument text is sent as is.
func rawCall(name, text string) llm.ScriptToolCall {
	b, _ := json.Marshal(text)
	return llm.ScriptToolCall{Name: name, Arguments: b}
}

func script(turns ...llm.ScriptTurn) *llm.Scripted {
	return llm.NewScripted(llm.Script{Turns: turns})
}

// toolResults returns the toolResult messages of a conversation.
func toolResults(msgs []llm.Message) []llm.Message {
	var out []llm.Message
	for _, m := range msgs {
		if m.Role == llm.RoleToolResult {
			out = append(out, m)
		}
	}
	return out
}

func text(m llm.Message) string {
	s := ""
	for _, c := range m.Content {
		s += c.Text
	}
	return s
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
