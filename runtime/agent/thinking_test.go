package agent_test

import (
	"context"
	"testing"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
)

// Config.Thinking is read before each model call and sent as the
// request's level; Config.Price prices each response's usage, which the
// message_end event and the run's sum carry.
func TestThinkingAndPrice(t *testing.T) {
	script, err := llm.ParseScript([]byte(`{"turns": [
  {"toolCalls": [{"name": "nothing"}], "usage": {"input": 1000, "output": 10, "totalTokens": 1010}},
  {"text": "done", "usage": {"input": 2000, "output": 20, "totalTokens": 2020}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := llm.NewScripted(script)
	levels := []llm.ThinkingLevel{llm.ThinkingHigh, llm.ThinkingLow}
	calls := 0
	var ends []llm.Usage
	a := agent.New(agent.Config{
		Provider: p,
		Thinking: func() llm.ThinkingLevel { l := levels[calls%2]; calls++; return l },
		Price: func(u llm.Usage) llm.Cost {
			c := llm.Cost{Input: float64(u.InputTokens) / 1e3, Output: float64(u.OutputTokens) / 1e2}
			c.Total = c.Input + c.Output
			return c
		},
		OnEvent: func(ev agent.Event) {
			if ev.Type == agent.EventMessageEnd && ev.Usage != nil {
				ends = append(ends, *ev.Usage)
			}
		},
	})
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 2 || reqs[0].Thinking != llm.ThinkingHigh || reqs[1].Thinking != llm.ThinkingLow {
		t.Fatalf("request levels %v", reqs)
	}
	if len(ends) != 2 || ends[0].Cost.Total != 1.1 || ends[1].Cost.Total != 2.2 {
		t.Errorf("message_end usage %+v", ends)
	}
	if res.Usage.Cost.Total < 3.3-1e-9 || res.Usage.Cost.Total > 3.3+1e-9 || res.Usage.InputTokens != 3000 {
		t.Errorf("run usage %+v", res.Usage)
	}
}
