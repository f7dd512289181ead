package pitest

import (
	"context"
	"fmt"

	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/llm"
)

// This file gives an extension under test a conversation (Options.Converse):
// a session in memory and a scripted model, so that ABI 1.2's session.*
// and agent.* methods and the conversation's hooks and events run.

// modeFor is the mode the extensions are told: print with a conversation,
// tool without one.
func modeFor(o Options) string {
	if o.Converse != nil {
		return app.ModePrint
	}
	return app.ModeTool
}

// converse holds the conversation of Options.Converse.
func (p *Pi) converse(o Options) error {
	if o.Converse == nil {
		return nil
	}
	var s llm.Script
	for _, text := range o.Converse {
		s.Turns = append(s.Turns, llm.ScriptTurn{Text: text})
	}
	c, err := conversation.New(p.rt, conversation.Options{Provider: llm.NewScripted(s), ModelName: "pitest"})
	if err != nil {
		return fmt.Errorf("pitest: conversation: %w", err)
	}
	p.conv = c
	return nil
}

// close closes the conversation, then the runtime.
func (p *Pi) close() {
	if p.conv != nil {
		p.conv.Close()
	}
	p.rt.Close()
}

// Conversation is the conversation of Options.Converse (nil without it):
// drive it as a front end does (Submit, NewSession, Compact, ...).
func (p *Pi) Conversation() *conversation.Conversation { return p.conv }

// Prompt sends text as a person would (input hooks, slash commands, then
// the model), waits for every run an extension started or queued, and
// returns what was shown (a command's text) and the model's last answer.
// It fails the test without Options.Converse or when the prompt fails.
func (p *Pi) Prompt(text string) (shown, answer string) {
	p.t.Helper()
	if p.conv == nil {
		p.t.Fatal("pitest: Prompt needs Options.Converse")
	}
	var out []string
	sub, err := p.conv.Submit(context.Background(), conversation.Prompt{Text: text}, conversation.SubmitOptions{Interactive: true, Builtins: true, Show: func(s string) { out = append(out, s) }})
	if err != nil {
		p.t.Fatalf("pitest: prompt %q: %v", text, err)
	}
	if err := p.conv.WaitExtensionRuns(context.Background()); err != nil {
		p.t.Fatalf("pitest: prompt %q: %v", text, err)
	}
	if sub.Result != nil {
		answer = sub.Result.Text
	}
	for i, s := range out {
		if i > 0 {
			shown += "\n"
		}
		shown += s
	}
	return shown, answer
}
