//go:build !wasip1

package main

import (
	"os"
	"strings"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/apptest"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/app"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

func TestBriefIsAddedToEveryPrompt(t *testing.T) {
	p := apptest.New(t, "context", plugin.BuildGo(t, "examples/plugins/context"), "[extensions.grants]\nfs = [\"ro:.\"]\n")
	p.Write(t, "BRIEF.md", "A Go web service. Run `make test` before finishing.\n")
	rt := p.Open(t, app.Options{})
	model := apptest.Model(t, `{"turns":[{"text":"ok"}]}`)
	if _, s, err := apptest.Submit(t, rt, model, "add a health check"); err != nil || s.Result == nil {
		t.Fatalf("run: %+v, %v", s, err)
	}
	sys := model.Requests()[0].SystemPrompt
	if !strings.HasSuffix(sys, "\n\n# Project brief (BRIEF.md)\n\nA Go web service. Run `make test` before finishing.\n") {
		t.Errorf("system prompt does not end with the brief:\n%s", sys)
	}
}

func TestBriefNeedsTheGrant(t *testing.T) {
	p := apptest.New(t, "context", plugin.BuildGo(t, "examples/plugins/context"), "")
	p.Write(t, "BRIEF.md", "the brief")
	rt := p.Open(t, app.Options{})
	model := apptest.Model(t, `{"turns":[{"text":"ok"}]}`)
	apptest.Submit(t, rt, model, "hi")
	if strings.Contains(model.Requests()[0].SystemPrompt, "the brief") {
		t.Errorf("the brief was read without an fs grant")
	}
}

func TestSecretsNeverReachTheModel(t *testing.T) {
	p := apptest.New(t, "context", plugin.BuildGo(t, "examples/plugins/context"), "[extensions.config]\nsecrets = ['corp-[0-9]{6}']\n")
	rt := p.Open(t, app.Options{})
	for _, prompt := range []string{
		"use the key sk-abcdefghijklmnopqrstuvwxyz123456 to call it",
		"AKIAABCDEFGHIJKLMNOP is my id",
		"-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
		"password = hunter2hunter2",
		"the token is corp-123456",
	} {
		model := apptest.Model(t, `{"turns":[{"text":"ok"}]}`)
		shown, s, err := apptest.Submit(t, rt, model, prompt)
		if err != nil || s.Handled != "context" || len(model.Requests()) != 0 || len(shown) != 1 || !strings.HasPrefix(shown[0], "context: the prompt was not sent") {
			t.Errorf("%q: shown %q, %+v, %v, %d model calls", prompt, shown, s, err, len(model.Requests()))
		}
	}
	model := apptest.Model(t, `{"turns":[{"text":"ok"}]}`)
	if _, s, err := apptest.Submit(t, rt, model, "explain what an sk- prefix means"); err != nil || s.Result == nil || len(model.Requests()) != 1 {
		t.Errorf("an ordinary prompt: %+v, %v", s, err)
	}
}

func TestBadSecretPatternFailsTheLoad(t *testing.T) {
	p := apptest.New(t, "context", plugin.BuildGo(t, "examples/plugins/context"), "[extensions.config]\nsecrets = ['(']\n")
	if _, err := app.Open(t.Context(), app.Options{Cwd: p.Dir, PIHome: p.Home, Trust: true}); err == nil || !strings.Contains(err.Error(), `config secrets[0] "("`) {
		t.Errorf("a bad pattern: %v", err)
	}
}
