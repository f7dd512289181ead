//go:build !wasip1

package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/apptest"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// The project's "tests": fail until the file fixed exists.
const check = `[ -f fixed ] && echo ok || { echo "FAIL TestParse: fixed is missing"; exit 1; }`

func userTexts(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == llm.RoleUser {
			out = append(out, m.Content[0].Text)
		}
	}
	return out
}

// TestGateContinuesUntilTestsPass: the model says "done" with failing
// tests; the stop hook sends the failures; the model fixes them; the next
// "done" ends the run.
func TestGateContinuesUntilTestsPass(t *testing.T) {
	p := apptest.New(t, "test-gate", plugin.BuildGo(t, "examples/plugins/test-gate"),
		"[extensions.grants]\ntools = [\"bash\"]\n[extensions.config]\ncommand = '"+check+"'\n")
	rt := p.Open(t, app.Options{})
	model := apptest.Model(t, `{"turns":[
		{"text":"done"},
		{"toolCalls":[{"name":"write","arguments":{"path":"fixed","content":"x"}}]},
		{"text":"fixed it"}]}`)
	_, s, err := apptest.Submit(t, rt, model, "make the tests pass")
	if err != nil || s.Result == nil || s.Result.Text != "fixed it" || s.Result.Turns != 3 {
		t.Fatalf("run = %+v, %v", s.Result, err)
	}
	reqs := model.Requests()
	got := userTexts(reqs[1].Messages)
	if len(got) != 2 || !strings.Contains(got[1], "The tests fail (`"+check+"`)") || !strings.Contains(got[1], "FAIL TestParse: fixed is missing") {
		t.Errorf("the model was told %q", got)
	}
	if len(reqs) != 3 {
		t.Errorf("%d model calls, want 3 (the passing tests end the run)", len(reqs))
	}
}

// TestGateCannotLoopForever: tests that never pass continue the run 3
// times, then pi ends it with a warning.
func TestGateCannotLoopForever(t *testing.T) {
	p := apptest.New(t, "test-gate", plugin.BuildGo(t, "examples/plugins/test-gate"),
		"[extensions.grants]\ntools = [\"bash\"]\n[extensions.config]\ncommand = 'echo always broken; exit 3'\n")
	var warnings []string
	rt := p.Open(t, app.Options{OnWarning: func(w string) { warnings = append(warnings, w) }})
	model := apptest.Model(t, `{"turns":[{"text":"1"},{"text":"2"},{"text":"3"},{"text":"4"},{"text":"5"}]}`)
	_, s, err := apptest.Submit(t, rt, model, "go")
	if err != nil || s.Result.Turns != 4 || len(model.Requests()) != 4 {
		t.Fatalf("run = %+v, %v, %d model calls", s.Result, err, len(model.Requests()))
	}
	if !slices.Equal(warnings, []string{app.StopCappedWarning}) {
		t.Errorf("warnings %q", warnings)
	}
}

// TestGateWithoutGrant: without tools = ["bash"] the gate cannot run the
// tests; the run ends (and the log says why).
func TestGateWithoutGrant(t *testing.T) {
	p := apptest.New(t, "test-gate", plugin.BuildGo(t, "examples/plugins/test-gate"), "")
	logs := &strings.Builder{}
	rt := p.Open(t, app.Options{LogOutput: logs})
	model := apptest.Model(t, `{"turns":[{"text":"done"},{"text":"never"}]}`)
	_, s, err := apptest.Submit(t, rt, model, "go")
	if err != nil || s.Result.Turns != 1 {
		t.Fatalf("run = %+v, %v", s.Result, err)
	}
	if !strings.Contains(logs.String(), `permission denied: extension test-gate may not call tool "bash" (grants.tools: none)`) {
		t.Errorf("log lacks the denial:\n%s", logs.String())
	}
	_ = context.Background
}

// TestGateConfigIsChecked: the config schema refuses a wrong type at load,
// naming the key.
func TestGateConfigIsChecked(t *testing.T) {
	p := apptest.New(t, "test-gate", plugin.BuildGo(t, "examples/plugins/test-gate"),
		"[extensions.config]\ncommand = 5\n")
	_, err := app.Open(context.Background(), app.Options{Cwd: p.Dir, PIHome: p.Home, Trust: true})
	if err == nil || !strings.Contains(err.Error(), "extensions[0].config.command: expected string, got number") {
		t.Errorf("command = 5: %v", err)
	}
}
