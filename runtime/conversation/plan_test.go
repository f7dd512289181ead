package conversation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openaitest "github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/app"
)

// toolNames are the names of the tools a request offered.
func toolNames(body map[string]any) []string {
	var out []string
	tools, _ := body["tools"].([]any)
	for _, x := range tools {
		out = append(out, x.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	return out
}

// TestPlanMode: --plan offers no write or edit, says so in the system
// prompt and runs bash read-only (a write is refused and named); /plan
// leaves it, and the same bash write then works (the control).
func TestPlanMode(t *testing.T) {
	if s := app.ProbeSandbox(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	dir := t.TempDir()
	write := func(name string) openaitest.Reply {
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "bash", Arguments: fmt.Sprintf(`{"command":"echo x > %s"}`, name)}}}
	}
	srv := openaitest.NewServer(t, write("planned.txt"), openaitest.Reply{Text: "here is the plan"},
		write("done.txt"), openaitest.Reply{Text: "done"})
	c := openSession(t, dir, t.TempDir(), t.TempDir(), srv.URL, SessionOptions{}, Options{Plan: true})
	if !c.PlanMode() {
		t.Fatal("--plan did not start in plan mode")
	}
	if _, err := submit(t, c, "plan it"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	names := strings.Join(toolNames(reqs[0]), ",")
	if strings.Contains(names, "write") || strings.Contains(names, "edit") || !strings.Contains(names, "bash") {
		t.Errorf("plan mode offered %s", names)
	}
	if texts := wireTexts(reqs[0]); !strings.Contains(texts[0], "Plan mode is on") {
		t.Errorf("system prompt without the plan note: %.200s", texts[0])
	}
	if _, err := os.Stat(filepath.Join(dir, "planned.txt")); err == nil {
		t.Fatal("bash wrote a file in plan mode")
	}
	if texts := wireTexts(reqs[1]); !strings.Contains(strings.Join(texts, "\n"), "Sandbox refused: write: "+filepath.Join(dir, "planned.txt")+" (sandbox read-only)") {
		t.Errorf("the refusal is not named: %q", texts)
	}

	var shown string
	_, err := c.Submit(context.Background(), Prompt{Text: "/plan"}, SubmitOptions{Interactive: true, Builtins: true, Show: func(s string) { shown += s }})
	if err != nil || c.PlanMode() || !strings.Contains(shown, "Plan mode off") {
		t.Fatalf("/plan: %q %v", shown, err)
	}
	if _, err := submit(t, c, "do it"); err != nil {
		t.Fatal(err)
	}
	reqs = srv.Requests()
	if names := strings.Join(toolNames(reqs[2]), ","); !strings.Contains(names, "write") || !strings.Contains(names, "edit") {
		t.Errorf("after /plan the tools are %s", names)
	}
	if _, err := os.Stat(filepath.Join(dir, "done.txt")); err != nil {
		t.Fatal("control: bash could not write after plan mode")
	}
}
