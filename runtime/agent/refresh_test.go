package agent_test

import (
	"context"
	"slices"
	"testing"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

func constTool(name, answer string) tool.ToolDefinition {
	return tool.ToolDefinition{Name: name, Description: "Answers " + answer + ".",
		Execute: func(context.Context, tool.Call, tool.Context) (tool.Result, error) {
			return tool.TextResult(answer), nil
		}}
}

// TestRefreshReplacesToolsBetweenTurns: Config.Refresh is asked before
// every turn; a non-nil answer replaces the tools the model is told of, the
// tools calls run against and the system prompt, from that turn on.
func TestRefreshReplacesToolsBetweenTurns(t *testing.T) {
	p := script(
		llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{call("old", `{}`)}},
		llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{call("new", `{}`), call("old", `{}`)}},
		llm.ScriptTurn{Text: "done"},
	)
	asked := 0
	a := agent.New(agent.Config{
		Provider: p, Tools: wrap(t, constTool("old", "from old")), SystemPrompt: "prompt 1",
		Refresh: func() *agent.ToolSet {
			asked++
			if asked != 2 { // only before the second turn
				return nil
			}
			return &agent.ToolSet{Tools: wrap(t, constTool("new", "from new")), SystemPrompt: "prompt 2"}
		},
	})
	res, err := a.Run(context.Background(), "go")
	if err != nil || res.Text != "done" {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if asked != 3 {
		t.Errorf("Refresh asked %d times, want once per turn (3)", asked)
	}
	reqs := p.Requests()
	names := func(r llm.Request) []string {
		var out []string
		for _, s := range r.Tools {
			out = append(out, s.Name)
		}
		return out
	}
	if !slices.Equal(names(reqs[0]), []string{"old"}) || !slices.Equal(names(reqs[1]), []string{"new"}) || !slices.Equal(names(reqs[2]), []string{"new"}) {
		t.Errorf("tools per turn: %v %v %v", names(reqs[0]), names(reqs[1]), names(reqs[2]))
	}
	if reqs[0].SystemPrompt != "prompt 1" || reqs[1].SystemPrompt != "prompt 2" {
		t.Errorf("system prompts: %q %q", reqs[0].SystemPrompt, reqs[1].SystemPrompt)
	}
	var got []string
	for _, m := range toolResults(res.Messages) {
		got = append(got, text(m))
	}
	if !slices.Equal(got, []string{"from old", "from new", "Tool old not found"}) {
		t.Errorf("results = %q", got)
	}
}
