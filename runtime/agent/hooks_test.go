package agent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

func script(t *testing.T, js string) *llm.Scripted {
	t.Helper()
	s, err := llm.ParseScript([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return llm.NewScripted(s)
}

// TestBeforeStartHoldsForTheRun: the system prompt BeforeStart returns is
// sent with every turn of that run, continues included; its messages come
// before the prompt; the next run asks again.
func TestBeforeStartHoldsForTheRun(t *testing.T) {
	p := script(t, `{"turns":[{"text":"a"},{"text":"b"},{"text":"c"}]}`)
	var calls []string
	stops := 0
	a := New(Config{
		Provider: p, SystemPrompt: "base",
		BeforeStart: func(_ context.Context, prompt, sys string) (string, [][]tool.ContentBlock) {
			calls = append(calls, prompt+"|"+sys)
			return sys + " + " + prompt, [][]tool.ContentBlock{{tool.Text("ctx for " + prompt)}}
		},
		Stop: func(_ context.Context, s StopInfo) (string, bool) {
			stops++
			return "again", stops == 1
		},
	})
	if _, err := a.Run(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(context.Background(), "two"); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 3 || reqs[0].SystemPrompt != "base + one" || reqs[1].SystemPrompt != "base + one" || reqs[2].SystemPrompt != "base + two" {
		t.Fatalf("system prompts %q", []string{reqs[0].SystemPrompt, reqs[1].SystemPrompt, reqs[2].SystemPrompt})
	}
	if !slices.Equal(calls, []string{"one|base", "two|base"}) {
		t.Errorf("BeforeStart calls %q", calls)
	}
	var users []string
	for _, m := range reqs[2].Messages {
		if m.Role == llm.RoleUser {
			users = append(users, m.Content[0].Text)
		}
	}
	if !slices.Equal(users, []string{"ctx for one", "one", "again", "ctx for two", "two"}) {
		t.Errorf("user messages %q", users)
	}
}

// TestStopIsCalledOnlyAtANormalEnd: not after tool calls that terminate,
// not at MaxTurns, not after an error or an abort; capped at 3.
func TestStopIsCalledOnlyAtANormalEnd(t *testing.T) {
	cases := []struct {
		name   string
		script string
		max    int
		ctx    func() context.Context
		calls  int
	}{
		{"normal end", `{"turns":[{"text":"a"},{"text":"b"},{"text":"c"},{"text":"d"},{"text":"e"}]}`, 0, context.Background, 3},
		{"max turns", `{"turns":[{"text":"a"},{"text":"b"}]}`, 1, context.Background, 0},
		{"length", `{"turns":[{"text":"a","stopReason":"length"}]}`, 0, context.Background, 0},
		{"provider error", `{"turns":[{"error":"boom"}]}`, 0, context.Background, 0},
		{"aborted", `{"turns":[{"text":"a"}]}`, 0, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls, capped := 0, 0
			a := New(Config{
				Provider: script(t, tc.script), MaxTurns: tc.max,
				Stop:         func(context.Context, StopInfo) (string, bool) { calls++; return "more", true },
				OnStopCapped: func() { capped++ },
			})
			a.Run(tc.ctx(), "go")
			if calls != tc.calls {
				t.Errorf("Stop called %d times, want %d", calls, tc.calls)
			}
			if wantCapped := tc.calls == MaxStopContinues; (capped == 1) != wantCapped {
				t.Errorf("OnStopCapped called %d times", capped)
			}
		})
	}
	// A terminating tool ends the run without Stop.
	calls := 0
	a := New(Config{
		Provider: script(t, `{"turns":[{"text":"x","toolCalls":[{"name":"fin","arguments":{}}]},{"text":"y"}]}`),
		Tools:    []tool.AgentTool{terminating(t)},
		Stop:     func(context.Context, StopInfo) (string, bool) { calls++; return "more", true },
	})
	res, _ := a.Run(context.Background(), "go")
	if calls != 0 || res.StopReason != llm.StopToolUse {
		t.Errorf("terminate: Stop called %d times, %+v", calls, res.StopReason)
	}
	// Stop sees the last text and the turn count.
	var seen []StopInfo
	a = New(Config{Provider: script(t, `{"turns":[{"text":"first"},{"text":"second"}]}`), Stop: func(_ context.Context, s StopInfo) (string, bool) {
		seen = append(seen, s)
		return "go on", len(seen) == 1
	}})
	a.Run(context.Background(), "go")
	if len(seen) != 2 || seen[0] != (StopInfo{LastText: "first", Turns: 1}) || seen[1] != (StopInfo{LastText: "second", Turns: 2}) || !strings.Contains(seen[1].LastText, "second") {
		t.Errorf("Stop saw %+v", seen)
	}
}

func terminating(t *testing.T) tool.AgentTool {
	t.Helper()
	at, err := tool.Wrap(tool.ToolDefinition{
		Name: "fin", Label: "fin", Description: "ends the run", Parameters: []byte(`{"type":"object"}`),
		Execute: func(context.Context, tool.Call, tool.Context) (tool.Result, error) {
			return tool.Result{Content: []tool.ContentBlock{tool.Text("bye")}, Terminate: true}, nil
		},
	}, func(string) tool.Context { return tool.Context{} })
	if err != nil {
		t.Fatal(err)
	}
	return at
}
