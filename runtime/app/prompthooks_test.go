package app

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
)

// scripted returns a provider that answers the turns, each a text.
func scripted(t *testing.T, turns ...string) *llm.Scripted {
	t.Helper()
	var s llm.Script
	for _, x := range turns {
		s.Turns = append(s.Turns, llm.ScriptTurn{Text: x})
	}
	return llm.NewScripted(s)
}

func userTexts(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == llm.RoleUser {
			for _, c := range m.Content {
				out = append(out, c.Text)
			}
		}
	}
	return out
}

func TestABI11SubmitInputCommandsAndStartHooks(t *testing.T) {
	dir, home := rawProject(t, rawEntry{name: "raw11", config: "inputSecret = \"sk-\"\ninputSuffix = \" (tested)\"\nsystem = \"Project brief: a Go service.\"\ncontext = \"The build is make.\"\nevents = [\"message_end\", \"agent_end\"]"})
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	p := scripted(t, "one", "two", "three", "four")
	ag, err := rt.NewAgent(AgentOptions{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	opts := SubmitOptions{Show: func(s string) { shown = append(shown, s) }}
	ctx := context.Background()

	// A secret never reaches the model.
	s, err := rt.Submit(ctx, ag, Prompt{Text: "my key is sk-123"}, opts)
	if err != nil || s.Handled != "raw11" || s.Result != nil || len(p.Requests()) != 0 || !slices.Equal(shown, []string{"refused: the prompt holds a secret"}) {
		t.Fatalf("a refused prompt: %+v, %v, %d requests, shown %q", s, err, len(p.Requests()), shown)
	}
	// A prompt goes through the input hook (replaced) and before_agent_start.
	s, err = rt.Submit(ctx, ag, Prompt{Text: "fix it"}, opts)
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
	s, err = rt.Submit(ctx, ag, Prompt{Text: "/raw  hello   world "}, opts)
	if err != nil || s.Command != "raw" || s.Result != nil || !slices.Equal(shown, []string{"raw: hello   world  (tested)"}) || len(p.Requests()) != 1 {
		t.Errorf("/raw: %+v, %v, shown %q", s, err, shown)
	}
	// A command's prompt goes to the model after its text is shown, without
	// passing the input hooks again.
	shown = nil
	s, err = rt.Submit(ctx, ag, Prompt{Text: "/raw ask plan the release"}, opts)
	if err != nil || s.Result == nil || s.Result.Text != "two" || !slices.Equal(shown, []string{"raw: ask plan the release (tested)"}) {
		t.Errorf("/raw ask: %+v, %v, shown %q", s, err, shown)
	}
	if got := userTexts(p.Requests()[1].Messages); got[len(got)-1] != "plan the release (tested)" {
		t.Errorf("the command's prompt reached the model as %q", got)
	}
	// An unknown /x: said so interactively; sent to the model with -p.
	shown = nil
	s, err = rt.Submit(ctx, ag, Prompt{Text: "/nope x"}, SubmitOptions{Interactive: true, Show: opts.Show})
	if err != nil || s.Result != nil || !slices.Equal(shown, []string{"unknown command /nope (see /help)"}) {
		t.Errorf("interactive /nope: %+v, %v, shown %q", s, err, shown)
	}
	s, err = rt.Submit(ctx, ag, Prompt{Text: "/tmp/x.txt what is it"}, SubmitOptions{Interactive: true, Show: opts.Show})
	if err != nil || s.Result == nil {
		t.Errorf("a path is no command: %+v, %v", s, err)
	}
	s, err = rt.Submit(ctx, ag, Prompt{Text: "/nope x"}, opts)
	if err != nil || s.Result == nil {
		t.Errorf("-p /nope goes to the model: %+v, %v", s, err)
	}
	// /help lists the built-in and the extension's commands; /exit ends.
	shown = nil
	rt.Submit(ctx, ag, Prompt{Text: "/help"}, opts)
	if len(shown) != 1 || !strings.Contains(shown[0], "/help") || !strings.Contains(shown[0], "/raw ARGS") || !strings.Contains(shown[0], "echo the arguments (extension raw11)") {
		t.Errorf("/help = %q", shown)
	}
	if s, _ := rt.Submit(ctx, ag, Prompt{Text: "/exit"}, SubmitOptions{Interactive: true}); !s.Exit {
		t.Errorf("/exit = %+v", s)
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
	dir, home := rawProject(t, rawEntry{name: "raw11", config: "inputCrash = true"})
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	p := scripted(t, "one")
	ag, _ := rt.NewAgent(AgentOptions{Provider: p})
	// Each fault keeps the prompt away; the third disables the extension,
	// which keeps prompts away for good.
	for i := 1; i <= 4; i++ {
		_, err := rt.Submit(context.Background(), ag, Prompt{Text: "hi"}, SubmitOptions{})
		if err == nil || !strings.Contains(err.Error(), "the prompt was not sent") || len(p.Requests()) != 0 {
			t.Errorf("prompt %d with a failing input hook: %v, %d requests", i, err, len(p.Requests()))
		}
		if i == 4 && !strings.Contains(err.Error(), "disabled") {
			t.Errorf("after 3 faults: %v", err)
		}
	}
}

func TestABI11StopCannotLoopForever(t *testing.T) {
	dir, home := rawProject(t, rawEntry{name: "raw11", config: "stopContinues = 100"})
	var warnings []string
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true, OnWarning: func(w string) { warnings = append(warnings, w) }})
	p := scripted(t, "a", "b", "c", "d", "e", "f", "g", "h")
	ag, _ := rt.NewAgent(AgentOptions{Provider: p})
	res, err := ag.Prompt(context.Background(), "go")
	if err != nil || res.Text != "d" || res.Turns != 4 || len(p.Requests()) != 4 {
		t.Fatalf("run = %+v, %v, %d requests", res, err, len(p.Requests()))
	}
	if !slices.Equal(warnings, []string{"stop hooks continued the run 3 times; ending it"}) {
		t.Errorf("warnings %q", warnings)
	}
	if got := userTexts(p.Requests()[3].Messages); !slices.Equal(got, []string{"go", "keep going (1)", "keep going (2)", "keep going (3)"}) {
		t.Errorf("the model got %q", got)
	}
	// The cap is per prompt: the next prompt may be continued again.
	res, err = ag.Prompt(context.Background(), "again")
	if err != nil || res.Turns != 4 || res.Text != "h" || len(warnings) != 2 {
		t.Errorf("second prompt = %+v, %v", res, err)
	}
	// --max-turns ends a run without asking the stop hooks.
	rt2 := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	p2 := scripted(t, "a", "b")
	ag2, _ := rt2.NewAgent(AgentOptions{Provider: p2, MaxTurns: 1})
	if res, _ := ag2.Prompt(context.Background(), "go"); res.Turns != 1 || len(p2.Requests()) != 1 {
		t.Errorf("max turns 1 with a stop hook: %+v", res)
	}
	_ = agent.MaxStopContinues
}
