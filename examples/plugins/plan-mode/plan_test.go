//go:build !wasip1

package main

import (
	"os"
	"strings"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestPlanMode: with --plan-mode the model gets only the read-only tools and
// the plan-mode instructions, a destructive bash command and a write are
// blocked, a read-only one runs, and the plan's steps become the todo
// list (/todos). /plan then leaves plan mode and asks for the plan to be
// carried out, with every tool back.
func TestPlanMode(t *testing.T) {
	p := porttest.New(t, "plan-mode", porttest.Build(t, "."), "")
	p.Write("main.go", "package main\n")
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: `{"command":"rm -rf main.go"}`}, {Name: "bash", Arguments: `{"command":"ls | wc -l"}`}}},
		openai.Reply{Text: "Looked around.\nPlan:\n1. Read main.go\n2. Add a test\n"},
		openai.Reply{Text: "doing it"})
	rpc := p.RPC("--plan-mode", "--base-url", srv.URL, "--model", "M", "--api-key", "k")
	rpc.Send(map[string]any{"id": "1", "type": "prompt", "message": "plan the work"})
	rpc.Idle()
	rpc.Settle()
	rpc.Send(map[string]any{"id": "2", "type": "prompt", "message": "/todos"})
	if m := rpc.UI("notify"); m["message"] != "1. Read main.go\n2. Add a test" {
		t.Errorf("/todos %v", m)
	}
	rpc.Settle()
	rpc.Send(map[string]any{"id": "3", "type": "prompt", "message": "/plan"})
	rpc.Idle()

	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests", len(reqs))
	}
	first := reqs[0]
	if !porttest.Contains(first, "[PLAN MODE ACTIVE]") {
		t.Errorf("no plan-mode instructions in the first request")
	}
	var tools []string
	for _, tl := range first["tools"].([]any) {
		tools = append(tools, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	if strings.Join(tools, ",") != "read,bash" {
		t.Errorf("plan-mode tools %v", tools)
	}
	second := reqs[1]
	if !porttest.Contains(second, "Plan mode: command blocked (not read-only): rm -rf main.go") || porttest.Contains(second, "Plan mode: command blocked (not read-only): ls") {
		t.Errorf("bash results %v", second["messages"])
	}
	if _, err := os.Stat(p.Dir + "/main.go"); err != nil {
		t.Errorf("main.go was removed")
	}
	third := reqs[2]
	if !porttest.Contains(third, `Execute the plan:\n1. Read main.go\n2. Add a test`) || porttest.Contains(third, "[PLAN MODE ACTIVE]") || len(third["tools"].([]any)) < 4 {
		t.Errorf("after /plan: %v", third)
	}
}
