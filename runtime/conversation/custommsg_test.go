package conversation

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

// During a run, agent.sendMessage with deliverAs steer or followUp is a
// custom_message entry written where the run delivers it (after the
// tool's result; when the run would end), which the model gets as a user
// message; display: true sends EventCustomMessage to the front ends.
func TestABI12SendMessageSteerIsACustomMessage(t *testing.T) {
	dir, home := project.New(t)
	a := plugin.BuildGo(t, "extensions/testdata/guests/conv12/a")
	project.Write(t, filepath.Join(dir, "pi.toml"), project.Extension(t, "conv12", a))
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true, Mode: app.ModeInteractive})
	script, err := llm.ParseScript([]byte(`{"turns":[
		{"toolCalls":[
			{"name":"conv12_call","arguments":{"method":"agent.sendMessage","params":{"customType":"steered","content":"steer text","display":true,"deliverAs":"steer","details":{"k":1}}}},
			{"name":"conv12_call","arguments":{"method":"agent.sendMessage","params":{"customType":"later","content":[{"type":"text","text":"follow text"}],"deliverAs":"followUp"}}}]},
		{"text":"saw the steer"},
		{"text":"saw the follow-up"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := llm.NewScripted(script)
	c := open(t, rt, Options{Provider: p})
	var shown []string
	c.Subscribe(func(ev agent.Event) {
		if ev.Type == EventCustomMessage {
			cm := DeliveredCustom(ev.Message)
			shown = append(shown, cm.CustomType+":"+ev.Message.Content[0].Text)
		}
	})
	res, err := submit(t, c, "go")
	if err != nil || res.Text != "saw the follow-up" {
		t.Fatalf("run = %+v, %v", res, err)
	}
	reqs := p.Requests()
	if len(reqs) != 3 || !slices.Equal(userTexts(reqs[1].Messages), []string{"go", "steer text"}) || !slices.Equal(userTexts(reqs[2].Messages), []string{"go", "steer text", "follow text"}) {
		t.Fatalf("the model's user messages: %q", userTexts(reqs[len(reqs)-1].Messages))
	}
	var kinds []string
	for _, e := range c.Session().Branch() {
		switch e.Type {
		case session.TypeCustomMessage:
			kinds = append(kinds, "custom:"+e.CustomType)
			if e.CustomType == "steered" && (!e.Display || string(e.Details) != `{"k":1}`) {
				t.Errorf("the steered entry lost display or details: %+v", e)
			}
		case session.TypeMessage:
			m, _ := e.ContextMessage()
			kinds = append(kinds, m.Role)
		}
	}
	want := []string{"user", "assistant", "toolResult", "toolResult", "custom:steered", "assistant", "custom:later", "assistant"}
	if !slices.Equal(kinds, want) {
		t.Errorf("branch %q, want %q", kinds, want)
	}
	if !slices.Equal(shown, []string{"steered:steer text"}) {
		t.Errorf("shown custom messages %q", shown)
	}
}

// A prompt that meets a run an extension started, before the front end saw
// it (its agent_start), steers that run instead of failing with "already
// running" (Submitted.Steered); the model gets it after the run's tool
// call.
func TestPromptDuringAnExtensionRunSteersIt(t *testing.T) {
	dir, home := project.New(t)
	a := plugin.BuildGo(t, "extensions/testdata/guests/conv12/a")
	project.Write(t, filepath.Join(dir, "pi.toml"), project.Extension(t, "conv12", a))
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true, Mode: app.ModeInteractive})
	gate := filepath.Join(dir, "gate")
	script, err := llm.ParseScript([]byte(`{"turns":[
		{"toolCalls":[{"name":"bash","arguments":{"command":"while [ ! -e ` + gate + ` ]; do sleep 0.01; done"}}]},
		{"text":"saw both"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := llm.NewScripted(script)
	started := make(chan struct{}, 1)
	c := open(t, rt, Options{Provider: p, OnEvent: func(ev agent.Event) {
		if ev.Type == agent.EventToolExecutionStart {
			started <- struct{}{}
		}
	}})
	ctx := context.Background()
	if _, err := c.Submit(ctx, Prompt{Text: "/conv12-typed send from the extension"}, SubmitOptions{Interactive: true}); err != nil {
		t.Fatal(err)
	}
	<-started // the extension's run waits in its tool call
	sub, err := c.Submit(ctx, Prompt{Text: "typed meanwhile"}, SubmitOptions{Interactive: true})
	if err != nil || !sub.Steered || sub.Result != nil {
		t.Fatalf("a prompt during the extension's run: %+v, %v", sub, err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitExtensionRuns(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 2 || !slices.Equal(userTexts(reqs[1].Messages), []string{"from the extension", "typed meanwhile"}) {
		t.Fatalf("the model's user messages: %q", userTexts(reqs[len(reqs)-1].Messages))
	}
	// Idle again: a prompt runs on its own.
	p2, _ := c.Submit(ctx, Prompt{Text: "after"}, SubmitOptions{Interactive: true}) // the script has no third turn: the run fails, but it is a run
	if p2.Steered || len(p.Requests()) != 3 {
		t.Error("a prompt while idle was queued as steering")
	}
}
