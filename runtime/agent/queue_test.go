package agent_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// roleTexts is "role:text" for each message of a request.
func roleTexts(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+":"+text(m))
	}
	return out
}

// hookTool is a tool whose execution calls fn (the person typing while it
// runs), then answers "ran".
func hookTool(name string, fn func()) tool.ToolDefinition {
	return tool.ToolDefinition{
		Name: name, Description: "Calls back.", Parameters: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, tool.Call, tool.Context) (tool.Result, error) {
			fn()
			return tool.TextResult("ran"), nil
		},
	}
}

// A message steered while a tool runs reaches the model after the tool's
// result, before the next model call, as a user message of its own turn.
func TestSteerWhileToolRuns(t *testing.T) {
	ev := &events{}
	p := script(
		llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{call("typing", `{}`)}},
		llm.ScriptTurn{Text: "ok, using tabs"},
	)
	var a *agent.Agent
	tools := wrap(t, hookTool("typing", func() { a.Steer(agent.UserMessage("use tabs, not spaces")) }))
	a = agent.New(agent.Config{Provider: p, Tools: tools, OnEvent: ev.on})
	res, err := a.Run(context.Background(), "format it")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "ok, using tabs" || res.Turns != 2 {
		t.Fatalf("result %q after %d turns", res.Text, res.Turns)
	}
	reqs := p.Requests()
	want := []string{"user:format it", "assistant:", "toolResult:ran", "user:use tabs, not spaces"}
	if got := roleTexts(reqs[1].Messages); !reflect.DeepEqual(got, want) {
		t.Fatalf("second request %q, want %q", got, want)
	}
	// The steered message has its message_start/message_end right after
	// the second turn_start; queue_update said it was queued, then that
	// the queue is empty again.
	types := ev.types()
	i := indexOf(types, agent.EventTurnStart, 2)
	if i < 0 || types[i+1] != agent.EventMessageStart || types[i+2] != agent.EventMessageEnd {
		t.Fatalf("events %v", types)
	}
	if m := ev.all()[i+2].Message; m.Role != llm.RoleUser || text(*m) != "use tabs, not spaces" {
		t.Fatalf("message_end after turn_start 2 = %+v", m)
	}
	var queues []string
	for _, e := range ev.ofType(agent.EventQueueUpdate) {
		b, _ := json.Marshal(e)
		queues = append(queues, string(b))
	}
	wantQ := []string{
		`{"type":"queue_update","steering":["use tabs, not spaces"],"followUp":[]}`,
		`{"type":"queue_update","steering":[],"followUp":[]}`,
	}
	if !reflect.DeepEqual(queues, wantQ) {
		t.Fatalf("queue updates %q, want %q", queues, wantQ)
	}
	if s, f := a.Queued(); len(s)+len(f) != 0 {
		t.Fatalf("queues not empty: %v %v", s, f)
	}
}

// indexOf is the index of the n-th (from 1) event of type typ, or -1.
func indexOf(types []agent.EventType, typ agent.EventType, n int) int {
	for i, x := range types {
		if x == typ {
			n--
			if n == 0 {
				return i
			}
		}
	}
	return -1
}

// stepProvider calls before(i) before the i-th (from 0) model call, then
// plays the script.
type stepProvider struct {
	*llm.Scripted
	calls  int
	before func(i int)
}

func (s *stepProvider) Stream(ctx context.Context, req llm.Request, on func(llm.StreamEvent)) (*llm.Response, error) {
	s.before(s.calls)
	s.calls++
	return s.Scripted.Stream(ctx, req, on)
}

// A message steered while the model answers without tools keeps the run
// going: the model is called again with it.
func TestSteerWhileModelAnswers(t *testing.T) {
	var a *agent.Agent
	sp := &stepProvider{Scripted: script(llm.ScriptTurn{Text: "done"}, llm.ScriptTurn{Text: "also done"})}
	sp.before = func(i int) {
		if i == 0 {
			a.Steer(agent.UserMessage("and the README too"))
		}
	}
	a = agent.New(agent.Config{Provider: sp})
	res, err := a.Run(context.Background(), "fix main.go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "also done" || res.Turns != 2 {
		t.Fatalf("result %q after %d turns", res.Text, res.Turns)
	}
	want := []string{"user:fix main.go", "assistant:done", "user:and the README too"}
	if got := roleTexts(sp.Requests()[1].Messages); !reflect.DeepEqual(got, want) {
		t.Fatalf("second request %q, want %q", got, want)
	}
}

// Follow-ups wait until the model is done; steering goes first; one at a
// time by default, all at once in QueueAll mode.
func TestFollowUpModes(t *testing.T) {
	for _, tc := range []struct {
		mode agent.QueueMode
		reqs [][]string // the user texts after the first prompt, per request
	}{
		{agent.QueueOneAtATime, [][]string{{}, {"steer"}, {"steer", "f1"}, {"steer", "f1", "f2"}}},
		{agent.QueueAll, [][]string{{}, {"steer"}, {"steer", "f1", "f2"}}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			var turns []llm.ScriptTurn
			for range tc.reqs {
				turns = append(turns, llm.ScriptTurn{Text: "ok"})
			}
			p := script(turns...)
			a := agent.New(agent.Config{Provider: p})
			a.SetQueueModes("", tc.mode)
			a.FollowUp(agent.UserMessage("f1"))
			a.FollowUp(agent.UserMessage("f2"))
			a.Steer(agent.UserMessage("steer"))
			if _, err := a.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			reqs := p.Requests()
			if len(reqs) != len(tc.reqs) {
				t.Fatalf("%d requests, want %d", len(reqs), len(tc.reqs))
			}
			for i, r := range reqs {
				var users []string
				for _, m := range r.Messages[1:] {
					if m.Role == llm.RoleUser {
						users = append(users, text(m))
					}
				}
				if users == nil {
					users = []string{}
				}
				if !reflect.DeepEqual(users, tc.reqs[i]) {
					t.Fatalf("request %d: later user messages %q, want %q", i, users, tc.reqs[i])
				}
			}
		})
	}
}

// A run stopped by MaxTurns leaves the queue for the next run; ClearQueues
// empties it and returns what it held.
func TestQueueSurvivesMaxTurnsAndClears(t *testing.T) {
	p := script(llm.ScriptTurn{Text: "one"})
	a := agent.New(agent.Config{Provider: p, MaxTurns: 1})
	a.FollowUp(agent.UserMessage("later"))
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if _, f := a.Queued(); len(f) != 1 {
		t.Fatalf("follow-up queue %v after MaxTurns, want it kept", f)
	}
	s, f := a.ClearQueues()
	if len(s) != 0 || len(f) != 1 || text(f[0]) != "later" {
		t.Fatalf("ClearQueues = %v %v", s, f)
	}
	if s, f := a.Queued(); len(s)+len(f) != 0 {
		t.Fatal("queues not empty after ClearQueues")
	}
	if _, err := agent.ParseQueueMode("some"); err == nil {
		t.Fatal("ParseQueueMode accepted a bad mode")
	}
}

// A prompt the model failed to answer is dropped, so the next request does
// not carry two user messages in a row; the session is told. The error's
// message_end has content [], never null.
func TestFailedPromptDropped(t *testing.T) {
	ev := &events{}
	p := script(
		llm.ScriptTurn{Text: "hello"},
		llm.ScriptTurn{Error: "401 invalid key"},
		llm.ScriptTurn{Text: "answered"},
	)
	var dropped []int
	a := agent.New(agent.Config{Provider: p, OnEvent: ev.on, OnDropPrompts: func(n int) { dropped = append(dropped, n) }})
	if _, err := a.Run(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(context.Background(), "first try"); err == nil {
		t.Fatal("the failing turn did not fail")
	}
	if !reflect.DeepEqual(dropped, []int{1}) {
		t.Fatalf("OnDropPrompts calls %v, want [1]", dropped)
	}
	if got := roleTexts(a.Messages()); !reflect.DeepEqual(got, []string{"user:hi", "assistant:hello"}) {
		t.Fatalf("conversation after the failure %q", got)
	}
	if _, err := a.Prompt(context.Background(), "second try"); err != nil {
		t.Fatal(err)
	}
	want := []string{"user:hi", "assistant:hello", "user:second try"}
	if got := roleTexts(p.Requests()[2].Messages); !reflect.DeepEqual(got, want) {
		t.Fatalf("request after the failure %q, want %q", got, want)
	}
	for _, e := range ev.ofType(agent.EventMessageEnd) {
		b, _ := json.Marshal(e)
		if strings.Contains(string(b), `"content":null`) {
			t.Fatalf("message_end with null content: %s", b)
		}
	}
}

// A steered message the model failed to answer is dropped too; what was
// answered before it stays.
func TestFailedSteerDropped(t *testing.T) {
	var a *agent.Agent
	p := script(
		llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{call("typing", `{}`)}},
		llm.ScriptTurn{Error: "503"},
	)
	tools := wrap(t, hookTool("typing", func() { a.Steer(agent.UserMessage("steered", content.Image("aGk=", "image/png"))) }))
	a = agent.New(agent.Config{Provider: p, Tools: tools})
	if _, err := a.Run(context.Background(), "go"); err == nil {
		t.Fatal("no error")
	}
	want := []string{"user:go", "assistant:", "toolResult:ran"}
	if got := roleTexts(a.Messages()); !reflect.DeepEqual(got, want) {
		t.Fatalf("conversation %q, want %q", got, want)
	}
}
