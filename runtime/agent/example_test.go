package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// A run with one tool call: the model asks for "shout", the loop runs it and
// sends the result back, and the model answers.
func Example() {
	shout := tool.ToolDefinition{
		Name:          "shout",
		Description:   "Upper-cases a text.",
		Parameters:    json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		PromptSnippet: "Upper-case a text",
		Execute: func(_ context.Context, c tool.Call, _ tool.Context) (tool.Result, error) {
			var in struct{ Text string }
			if err := json.Unmarshal(c.Input, &in); err != nil {
				return tool.Result{}, err
			}
			return tool.TextResult(strings.ToUpper(in.Text)), nil
		},
	}
	tools, err := tool.WrapAll([]tool.ToolDefinition{shout}, nil)
	if err != nil {
		panic(err)
	}
	model := llm.NewScripted(llm.Script{Turns: []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptToolCall{{Name: "shout", Arguments: json.RawMessage(`{"text":"hello"}`)}}},
		{Text: "It says HELLO."},
	}})
	a := agent.New(agent.Config{
		Provider:     model,
		Tools:        tools,
		SystemPrompt: agent.BuildSystemPrompt(agent.PromptOptions{Tools: []tool.ToolDefinition{shout}, Cwd: "/src"}),
		OnEvent: func(e agent.Event) {
			if e.Type == agent.EventToolExecutionEnd {
				fmt.Printf("%s -> %s\n", e.ToolName, e.Result.Text())
			}
		},
	})
	res, err := a.Run(context.Background(), "Shout hello.")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text, res.StopReason, res.Turns)
	// Output:
	// shout -> HELLO
	// It says HELLO. stop 2
}
