package conversation

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/mcpserver"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
)

// A conversation on an assembled runtime: the prompt reaches the model with
// the context files in the system prompt, the tools run with the key
// redacted from what the model and the events see.
func TestConversationRunsAPromptAndFeedsExtensions(t *testing.T) {
	dir, home := project.New(t)
	project.Write(t, filepath.Join(dir, "AGENTS.md"), "Be brief.")
	key := "sk-app-test-0123456789"
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Model: app.ModelOptions{APIKey: key}})
	script, err := llm.ParseScript([]byte(`{"turns":[{"toolCalls":[{"name":"bash","arguments":{"command":"printf %s ` + key + ` | wc -c; printf %s ` + key + `"}}]},{"text":"done"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var types []agent.EventType
	var result string
	provider := llm.NewScripted(script)
	c := open(t, rt, Options{Provider: provider, OnEvent: func(ev agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		types = append(types, ev.Type)
		if ev.Type == agent.EventToolExecutionEnd {
			result = ev.Result.Text()
		}
	}})
	res, err := submit(t, c, "go")
	if err != nil || res.Text != "done" {
		t.Fatalf("run = %+v, %v", res, err)
	}
	mu.Lock()
	if !slices.Contains(types, agent.EventToolExecutionEnd) || !slices.Contains(types, agent.EventAgentEnd) {
		t.Errorf("events: %v", types)
	}
	mu.Unlock()
	// The tool ran the model's exact command; the result the model and the
	// events see has the key redacted.
	want := fmt.Sprintf("%d\n[REDACTED]", len(key))
	if result != want {
		t.Errorf("bash result = %q, want %q: the real key counted, then redacted", result, want)
	}
	reqs := provider.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != llm.RoleToolResult || len(last.Content) != 1 || last.Content[0].Text != want {
		t.Errorf("the model was sent %+v", last)
	}
	sys := reqs[0].SystemPrompt
	if !strings.Contains(sys, "Be brief.") || !strings.Contains(sys, dir) {
		t.Errorf("system prompt lacks AGENTS.md or the cwd:\n%s", sys)
	}
}

func TestABI11SubmitInputCommandsAndStartHooks(t *testing.T) {
	dir, home := project.Raw(t, project.RawEntry{Name: "raw11", Config: "inputSecret = \"sk-\"\ninputSuffix = \" (tested)\"\nsystem = \"Project brief: a Go service.\"\ncontext = \"The build is make.\"\nevents = [\"message_end\", \"agent_end\"]"})
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true})
	p := scripted(t, "one", "two", "three", "four")
	c := open(t, rt, Options{Provider: p})
	var shown []string
	opts := SubmitOptions{Show: func(s string) { shown = append(shown, s) }}
	ctx := context.Background()

	// A secret never reaches the model.
	s, err := c.Submit(ctx, Prompt{Text: "my key is sk-123"}, opts)
	if err != nil || s.Handled != "raw11" || s.Result != nil || len(p.Requests()) != 0 || !slices.Equal(shown, []string{"refused: the prompt holds a secret"}) {
		t.Fatalf("a refused prompt: %+v, %v, %d requests, shown %q", s, err, len(p.Requests()), shown)
	}
	// A prompt goes through the input hook (replaced) and before_agent_start.
	s, err = c.Submit(ctx, Prompt{Text: "fix it"}, opts)
	if err != nil || s.Result == nil || s.Result.Text != "one" {
		t.Fatalf("a prompt: %+v, %v", s, err)
	}
	req := p.Requests()[0]
	if !strings.HasSuffix(req.SystemPrompt, "\n\nProject brief: a Go service.") {
		t.Errorf("system prompt does not end with the appended brief:\n%s", req.SystemPrompt)
	}
	if got := userTexts(req.Messages); !slices.Equal(got, []string{"The build is make.", "fix it (tested)"}) {
		t.Errorf("the model got user messages %q", got)
	}
	// A command (after the input hooks ran on the raw line): its text is
	// shown, nothing goes to the model.
	shown = nil
	s, err = c.Submit(ctx, Prompt{Text: "/raw  hello   world "}, opts)
	if err != nil || s.Command != "raw" || s.Result != nil || !slices.Equal(shown, []string{"raw: hello   world  (tested)"}) || len(p.Requests()) != 1 {
		t.Errorf("/raw: %+v, %v, shown %q", s, err, shown)
	}
	// A command's prompt goes to the model after its text is shown, without
	// passing the input hooks again.
	shown = nil
	s, err = c.Submit(ctx, Prompt{Text: "/raw ask plan the release"}, opts)
	if err != nil || s.Result == nil || s.Result.Text != "two" || !slices.Equal(shown, []string{"raw: ask plan the release (tested)"}) {
		t.Errorf("/raw ask: %+v, %v, shown %q", s, err, shown)
	}
	if got := userTexts(p.Requests()[1].Messages); got[len(got)-1] != "plan the release (tested)" {
		t.Errorf("the command's prompt reached the model as %q", got)
	}
	// An unknown /x: said so interactively; sent to the model with -p.
	shown = nil
	s, err = c.Submit(ctx, Prompt{Text: "/nope x"}, SubmitOptions{Interactive: true, Show: opts.Show})
	if err != nil || s.Result != nil || !slices.Equal(shown, []string{"unknown command /nope (see /help)"}) {
		t.Errorf("interactive /nope: %+v, %v, shown %q", s, err, shown)
	}
	s, err = c.Submit(ctx, Prompt{Text: "/tmp/x.txt what is it"}, SubmitOptions{Interactive: true, Show: opts.Show})
	if err != nil || s.Result == nil {
		t.Errorf("a path is no command: %+v, %v", s, err)
	}
	s, err = c.Submit(ctx, Prompt{Text: "/nope x"}, opts)
	if err != nil || s.Result == nil {
		t.Errorf("-p /nope goes to the model: %+v, %v", s, err)
	}
	// /help lists the built-in and the extension's commands (with or
	// without Builtins); /exit ends a person's session (pi's own commands
	// run with Builtins), and is only a command for a person.
	shown = nil
	c.Submit(ctx, Prompt{Text: "/help"}, opts)
	if len(shown) != 1 || !strings.Contains(shown[0], "/help") || !strings.Contains(shown[0], "/raw ARGS") || !strings.Contains(shown[0], "echo the arguments (extension raw11)") {
		t.Errorf("/help = %q", shown)
	}
	if s, _ := c.Submit(ctx, Prompt{Text: "/exit"}, SubmitOptions{Interactive: true, Builtins: true}); !s.Exit {
		t.Errorf("/exit = %+v", s)
	}
	shown = nil
	if s, _ := c.Submit(ctx, Prompt{Text: "/exit"}, SubmitOptions{Interactive: true, Show: opts.Show}); s.Exit || !slices.Equal(shown, []string{"unknown command /exit (see /help)"}) {
		t.Errorf("/exit without Builtins = %+v, shown %q", s, shown)
	}
	// Events: only the subscribed types, and message_end of the assistant's
	// messages only.
	res, _ := rt.CallTool(ctx, "facts", "c", json.RawMessage(`{}`), nil)
	var f struct{ Events []string }
	json.Unmarshal([]byte(res.Text()), &f)
	for _, ev := range f.Events {
		if ev != "message_end:assistant" && ev != "agent_end" {
			t.Errorf("the extension got event %q", ev)
		}
	}
	if !slices.Contains(f.Events, "message_end:assistant") || !slices.Contains(f.Events, "agent_end") {
		t.Errorf("events = %q", f.Events)
	}
}

func TestABI11InputHookFaultFailsClosed(t *testing.T) {
	dir, home := project.Raw(t, project.RawEntry{Name: "raw11", Config: "inputCrash = true"})
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true})
	p := scripted(t, "one")
	c := open(t, rt, Options{Provider: p})
	// Each fault keeps the prompt away; the third disables the extension,
	// which keeps prompts away for good.
	for i := 1; i <= 4; i++ {
		_, err := c.Submit(context.Background(), Prompt{Text: "hi"}, SubmitOptions{})
		if err == nil || !strings.Contains(err.Error(), "the prompt was not sent") || len(p.Requests()) != 0 {
			t.Errorf("prompt %d with a failing input hook: %v, %d requests", i, err, len(p.Requests()))
		}
		if i == 4 && !strings.Contains(err.Error(), "disabled") {
			t.Errorf("after 3 faults: %v", err)
		}
	}
}

func TestABI11StopCannotLoopForever(t *testing.T) {
	dir, home := project.Raw(t, project.RawEntry{Name: "raw11", Config: "stopContinues = 100"})
	var mu sync.Mutex
	var warnings []string
	warn := func(w string) {
		mu.Lock()
		warnings = append(warnings, w)
		mu.Unlock()
	}
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true, OnWarning: warn})
	p := scripted(t, "a", "b", "c", "d", "e", "f", "g", "h")
	c := open(t, rt, Options{Provider: p})
	res, err := submit(t, c, "go")
	if err != nil || res.Text != "d" || res.Turns != 4 || len(p.Requests()) != 4 {
		t.Fatalf("run = %+v, %v, %d requests", res, err, len(p.Requests()))
	}
	mu.Lock()
	if !slices.Equal(warnings, []string{"stop hooks continued the run 3 times; ending it"}) {
		t.Errorf("warnings %q", warnings)
	}
	mu.Unlock()
	if got := userTexts(p.Requests()[3].Messages); !slices.Equal(got, []string{"go", "keep going (1)", "keep going (2)", "keep going (3)"}) {
		t.Errorf("the model got %q", got)
	}
	// The cap is per prompt: the next prompt may be continued again.
	res, err = submit(t, c, "again")
	mu.Lock()
	if err != nil || res.Turns != 4 || res.Text != "h" || len(warnings) != 2 {
		t.Errorf("second prompt = %+v, %v", res, err)
	}
	mu.Unlock()
	// --max-turns ends a run without asking the stop hooks.
	rt2 := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true})
	p2 := scripted(t, "a", "b")
	c2 := open(t, rt2, Options{Provider: p2, MaxTurns: 1})
	if res, _ := submit(t, c2, "go"); res == nil || res.Turns != 1 || len(p2.Requests()) != 1 {
		t.Errorf("max turns 1 with a stop hook: %+v", res)
	}
	_ = agent.MaxStopContinues
}

// TestABI11DefaultEvents: a guest that names no events gets the six of
// ABI 1.0 and nothing new (not the conversation's session_start either).
func TestABI11DefaultEvents(t *testing.T) {
	dir, home := project.Raw(t, project.RawEntry{Name: "raw11"})
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true})
	p := llm.NewScripted(llm.Script{Turns: []llm.ScriptTurn{{ToolCalls: []llm.ScriptToolCall{{Name: "read", Arguments: json.RawMessage(`{"path":"pi.toml"}`)}}}, {Text: "ok"}}})
	c := open(t, rt, Options{Provider: p})
	if _, err := submit(t, c, "go"); err != nil {
		t.Fatal(err)
	}
	res, _ := rt.CallTool(context.Background(), "facts", "c", json.RawMessage(`{}`), nil)
	var f struct{ Events []string }
	json.Unmarshal([]byte(res.Text()), &f)
	seen := map[string]bool{}
	for _, e := range f.Events {
		seen[e] = true
	}
	for _, want := range []string{"agent_start", "agent_end", "turn_start", "turn_end", "tool_execution_start", "tool_execution_end"} {
		if !seen[want] {
			t.Errorf("default events lack %s: %q", want, f.Events)
		}
		delete(seen, want)
	}
	if len(seen) != 0 {
		t.Errorf("default events include %v", seen)
	}
}

// TestMCPToolsRefreshBetweenTurns: a server's tools/list_changed adds a
// tool, and the next turn of the conversation has it (the tool list the
// model is sent and the system prompt).
func TestMCPToolsRefreshBetweenTurns(t *testing.T) {
	dir, home := project.New(t)
	wasm := plugin.BuildWAT(t, "extensions/testdata/good.wat")
	good := fmt.Sprintf("[[extensions]]\nname = \"good\"\npath = %q\nsha256 = %q\n", wasm, project.SHA(t, wasm))
	mcp := fmt.Sprintf("[[mcp]]\nname = \"t\"\ncommand = [%q]\nenv = { MCPTEST_MARKER_DIR = %q }\n", mcpserver.Server(t), t.TempDir())
	project.Write(t, filepath.Join(home, "pi.toml"), good+"\n"+mcp)
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home})
	script, err := llm.ParseScript([]byte(`{"turns":[
		{"toolCalls":[{"name":"mcp__t__add_tool","arguments":{"name":"late"}}]},
		{"text":"added it"},
		{"toolCalls":[{"name":"mcp__t__late","arguments":{}},{"name":"mcp__t__echo","arguments":{"text":"BLOCKME"}}]},
		{"text":"done"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	provider := llm.NewScripted(script)
	c := open(t, rt, Options{Provider: provider})
	if _, err := submit(t, c, "add a tool"); err != nil {
		t.Fatal(err)
	}
	// The server's notification is handled in the background; wait until
	// the manager lists the new tool before the next prompt (whose first
	// turn picks it up).
	hasLate := func() bool {
		for _, s := range rt.MCPServers() {
			if slices.Contains(s.Tools, "mcp__t__late") {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(10 * time.Second)
	for !hasLate() {
		if time.Now().After(deadline) {
			t.Fatal("no tools/list_changed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := submit(t, c, "use it")
	if err != nil || res.Text != "done" {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	reqs := provider.Requests()
	toolNames := func(r llm.Request) []string {
		var out []string
		for _, s := range r.Tools {
			out = append(out, s.Name)
		}
		return out
	}
	if slices.Contains(toolNames(reqs[0]), "mcp__t__late") || !slices.Contains(toolNames(reqs[2]), "mcp__t__late") {
		t.Errorf("tools of turn 1: %v\ntools of turn 3: %v", toolNames(reqs[0]), toolNames(reqs[2]))
	}
	if !strings.Contains(reqs[2].SystemPrompt, "- mcp__t__late: Added at run time.") {
		t.Errorf("system prompt of turn 3 does not list the new tool:\n%s", reqs[2].SystemPrompt)
	}
	var results []string
	for _, m := range c.History() {
		if m.Role == llm.RoleToolResult {
			results = append(results, m.Content[0].Text)
		}
	}
	// The new tool ran, and the extension's hook still guards the MCP tools
	// inside the loop.
	if !slices.Equal(results, []string{"added late", "added", "blocked by good: BLOCKME"}) {
		t.Errorf("tool results = %q", results)
	}
}
