package llm_test

import (
	"context"
	"fmt"

	"github.com/pi-go/pi/runtime/llm"
)

// A script plays recorded turns offline: here one tool call, then an answer.
func ExampleNewScripted() {
	script, err := llm.ParseScript([]byte(`{"turns":[
		{"text":"Let me look.","toolCalls":[{"name":"ls","arguments":{"path":"."}}]},
		{"text":"The directory has 3 files."}
	]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	p := llm.NewScripted(script)
	for range 3 {
		resp, err := p.Stream(context.Background(), llm.Request{}, nil)
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		for _, c := range resp.Message.ToolCalls {
			fmt.Printf("call %s %s %s\n", c.ID, c.Name, c.Arguments)
		}
		fmt.Println(resp.StopReason, resp.Message.Content[0].Text)
	}
	// Output:
	// call call_1 ls {"path":"."}
	// toolUse Let me look.
	// stop The directory has 3 files.
	// error: scripted provider: script ended after 2 turns
}

func ExampleParseScript() {
	_, err := llm.ParseScript([]byte(`{"turns":[{"text":"hi"},{"toolCalls":[{"arguments":{}}]}]}`))
	fmt.Println(err)
	// Output:
	// parse script: turns[1].toolCalls[0].name: missing
}
