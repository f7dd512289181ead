package main

import (
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/app"
)

// TestRPCSetMode: set_mode "plan" takes write and edit from the model
// (the scripted model's write is "not found"); after "normal" the same
// write runs (the control); another mode is refused naming the two.
func TestRPCSetMode(t *testing.T) {
	if s := app.ProbeSandbox(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	for _, modes := range [][]string{{"plan"}, {"plan", "normal"}} {
		p := startRPC(t, "", "--no-session", "--cwd", t.TempDir(), "--script", writeScript(t,
			`{"turns":[{"toolCalls":[{"name":"write","arguments":{"path":"a.txt","content":"x"}}]},{"text":"ok"}]}`))
		p.expect("session_start", isType("session_start"))
		p.send(`{"id":"bad","type":"set_mode","mode":"dream"}`)
		if r := p.response("bad"); r["success"] != false || !strings.Contains(r["error"].(string), `mode must be "plan" or "normal"`) {
			t.Fatalf("bad mode: %v", r)
		}
		for _, mode := range modes {
			p.send(`{"id":"m","type":"set_mode","mode":"` + mode + `"}`)
			if r := p.response("m"); r["success"] != true {
				t.Fatalf("set_mode %s: %v", mode, r)
			}
		}
		p.send(`{"id":"p","type":"prompt","message":"go"}`)
		p.response("p")
		end := p.expect("tool_execution_end", isType("tool_execution_end"))
		isErr, _ := end["isError"].(bool)
		if plan := modes[len(modes)-1] == "plan"; plan != isErr {
			t.Fatalf("modes %v: write isError=%v: %v", modes, isErr, end)
		}
		p.expect("agent_end", isType("agent_end"))
	}
}
