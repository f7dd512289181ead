package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// processTool runs `sleep 30` as a real child process, like bash would, and
// tells started when the process is up. A cancelled ctx kills the process
// and the tool answers "Command aborted".
func processTool(started chan<- string, tl *timeline) tool.ToolDefinition {
	return tool.ToolDefinition{
		Name:        "longproc",
		Description: "Runs a long process.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"tag":{"type":"string"}}}`),
		Execute: func(ctx context.Context, call tool.Call, _ tool.Context) (tool.Result, error) {
			var in struct{ Tag string }
			_ = json.Unmarshal(call.Input, &in)
			cmd := exec.CommandContext(ctx, "sleep", "30")
			if err := cmd.Start(); err != nil {
				return tool.Result{}, err
			}
			s := span{tool: "longproc", tag: in.Tag}
			started <- in.Tag
			err := cmd.Wait()
			s.cancelled = ctx.Err() != nil
			tl.add(s)
			if s.cancelled {
				return tool.Result{}, errors.New("Command aborted")
			}
			return tool.TextResult("finished"), err
		},
	}
}

func TestCancelMidTool(t *testing.T) {
	tests := []struct {
		name       string
		sequential bool
		// want: result text per call, in order
		want []string
		runs int
	}{
		{"parallel", false, []string{"Command aborted", "quick slept 1ms"}, 2},
		{"sequential", true, []string{"Command aborted", "Tool sleep was not run: the run was aborted"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := &timeline{}
			started := make(chan string, 1)
			p := script(
				llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{
					call("longproc", `{"tag":"long"}`),
					call("sleep", `{"ms":1,"tag":"quick"}`),
				}},
				llm.ScriptTurn{Text: "never played"},
			)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Cancel once the long process runs and, in parallel, the quick
			// call has finished (so its result does not depend on timing).
			quickDone := make(chan struct{})
			go func() {
				<-started
				if !tc.sequential {
					<-quickDone
				}
				cancel()
			}()
			ev := &events{}
			a := agent.New(agent.Config{
				Provider:   p,
				Tools:      wrap(t, processTool(started, tl), sleepTool("sleep", tool.Parallel, tl)),
				Sequential: tc.sequential,
				OnEvent: func(e agent.Event) {
					ev.on(e)
					if e.Type == agent.EventToolExecutionEnd && e.ToolCallID == "call_2" && !tc.sequential {
						close(quickDone)
					}
				},
			})
			res, err := a.Run(ctx, "go")
			if err != nil {
				t.Fatalf("a cancelled run is not an error: %v", err)
			}
			if res.StopReason != llm.StopAborted {
				t.Fatalf("stop reason %q", res.StopReason)
			}
			if p.Remaining() != 1 {
				t.Fatalf("the model was called again after the abort")
			}
			rs := toolResults(res.Messages)
			if len(rs) != len(tc.want) {
				t.Fatalf("%d results, want %d", len(rs), len(tc.want))
			}
			for i, w := range tc.want {
				if text(rs[i]) != w {
					t.Errorf("result %d = %q, want %q", i, text(rs[i]), w)
				}
			}
			if !rs[0].IsError {
				t.Error("aborted call is not an error")
			}
			if n := tl.len(); n != tc.runs {
				t.Fatalf("%d tool executions, want %d", n, tc.runs)
			}
			if !tl.byTag(t)["long"].cancelled {
				t.Fatal("the long tool did not see its context cancelled")
			}
			// Every started call got an end event, and the run ended.
			if s, e := len(ev.ofType(agent.EventToolExecutionStart)), len(ev.ofType(agent.EventToolExecutionEnd)); s != 2 || e != 2 {
				t.Fatalf("%d starts, %d ends", s, e)
			}
			all := ev.all()
			if last := all[len(all)-1]; last.Type != agent.EventAgentEnd || last.StopReason != llm.StopAborted {
				t.Fatalf("last event %+v", last)
			}
		})
	}
}

func TestCancelMidStream(t *testing.T) {
	tl := &timeline{}
	p := script(
		llm.ScriptTurn{
			Text:      "I will now sleep for a very long time, as you asked.",
			ToolCalls: []llm.ScriptToolCall{call("sleep", `{"ms":1,"tag":"x"}`)},
		},
		llm.ScriptTurn{Text: "never played"},
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := &events{}
	a := agent.New(agent.Config{
		Provider: p,
		Tools:    wrap(t, sleepTool("sleep", tool.Parallel, tl)),
		OnEvent: func(e agent.Event) {
			ev.on(e)
			if e.Type == agent.EventMessageUpdate {
				cancel() // Ctrl-C while the first delta is on screen
			}
		},
	})
	res, err := a.Run(ctx, "go")
	if err != nil {
		t.Fatalf("a cancelled run is not an error: %v", err)
	}
	if res.StopReason != llm.StopAborted {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	if tl.len() != 0 || len(ev.ofType(agent.EventToolExecutionStart)) != 0 {
		t.Fatal("a tool ran after the stream was aborted")
	}
	// The partial text is kept, without tool calls that would lack results.
	msgs := a.Messages()
	if len(msgs) != 2 || msgs[1].Role != llm.RoleAssistant || len(msgs[1].ToolCalls) != 0 {
		t.Fatalf("messages %+v", msgs)
	}
	full := "I will now sleep for a very long time, as you asked."
	if got := text(msgs[1]); got == "" || got == full || !strings.HasPrefix(full, got) {
		t.Fatalf("kept text %q, want a proper prefix of %q", got, full)
	}
	if res.Text != text(msgs[1]) {
		t.Fatalf("result text %q", res.Text)
	}
	// message_start and message_end pair up, and the run ends.
	if s, e := len(ev.ofType(agent.EventMessageStart)), len(ev.ofType(agent.EventMessageEnd)); s != e {
		t.Fatalf("%d message_start, %d message_end", s, e)
	}
	all := ev.all()
	if last := all[len(all)-1]; last.Type != agent.EventAgentEnd || last.StopReason != llm.StopAborted {
		t.Fatalf("last event %+v", last)
	}
}

func TestCancelledBeforeRun(t *testing.T) {
	p := script(llm.ScriptTurn{Text: "never"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := agent.New(agent.Config{Provider: p})
	res, err := a.Run(ctx, "go")
	if err != nil || res.StopReason != llm.StopAborted {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if msgs := a.Messages(); len(msgs) != 1 || msgs[0].Role != llm.RoleUser {
		t.Fatalf("messages %+v", msgs)
	}
}

func TestBusy(t *testing.T) {
	started := make(chan string, 1)
	p := script(llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{call("longproc", `{"tag":"a"}`)}})
	a := agent.New(agent.Config{Provider: p, Tools: wrap(t, processTool(started, &timeline{}))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.Run(ctx, "first")
		done <- err
	}()
	<-started
	_, err := a.Prompt(context.Background(), "second")
	cancel()
	if !errors.Is(err, agent.ErrBusy) {
		t.Fatalf("second run: %v, want ErrBusy", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
