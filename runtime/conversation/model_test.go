package conversation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

// /thinking and /model: a model of the endpoint that the models file
// lists with reasoning takes levels (xhigh becomes the nearest it has,
// with a notice); /model switches within the provider and back; the
// session records both, and a new conversation resuming it goes on with
// them.
func TestThinkingAndModelCommands(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Text: "ok"}, openai.Reply{Text: "again"})
	dir, home, sessDir := t.TempDir(), t.TempDir(), t.TempDir()
	text := `{"providers": {"local": {"baseUrl": "` + srv.URL + `", "api": "openai-completions", "apiKey": "none",
  "models": [{"id": "m", "reasoning": true}, {"id": "small"}]}}}`
	if err := os.WriteFile(filepath.Join(home, "models.json"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{}, Options{})
	if got := c.ThinkingLevel(); got != llm.ThinkingMedium {
		t.Fatalf("start level %s, want the default medium", got)
	}
	var shown []string
	run := func(line string) {
		t.Helper()
		if _, err := c.Submit(context.Background(), Prompt{Text: line}, SubmitOptions{Builtins: true, Interactive: true, Show: func(s string) { shown = append(shown, s) }}); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	run("/thinking xhigh")
	if got := shown[len(shown)-1]; !strings.Contains(got, "thinking high") || !strings.Contains(got, "has no xhigh") {
		t.Errorf("/thinking xhigh said %q", got)
	}
	if _, err := c.SetThinkingLevel("max"); err == nil || !strings.Contains(err.Error(), `"max" is not a level`) {
		t.Errorf("a bad level: %v", err)
	}
	run("/model small")
	if m, _ := c.Model(); m.ID != "small" || c.ThinkingLevel() != llm.ThinkingOff {
		t.Errorf("after /model small: %s at %s", m.ID, c.ThinkingLevel())
	}
	if err := c.SetModel("local", "nope"); err == nil || !strings.Contains(err.Error(), "model not found: local/nope") {
		t.Errorf("an unknown model: %v", err)
	}
	run("/model local/m")
	if _, err := submit(t, c, "hi"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0]["model"]; got != "m" {
		t.Errorf("request model %v", got)
	}
	if _, err := c.SetThinkingLevel("low"); err != nil {
		t.Fatal(err)
	}
	path := c.Session().Path()
	c.Close()

	c2 := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{Path: path}, Options{})
	if got := c2.ThinkingLevel(); got != llm.ThinkingLow {
		t.Errorf("resumed level %s, want low", got)
	}
	if m, _ := c2.Model(); m.ID != "m" {
		t.Errorf("resumed model %s", m.ID)
	}
}

// --models A:LEVEL,B: a new conversation without a model flag starts at
// the scope's first model with the level its pattern names; cycling to a
// model whose pattern names a level sets it, to one without keeps the
// level (as the reference's --models); an ollama-style id with a colon of
// its own is matched whole; the session records each change.
func TestScopeWithLevels(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Text: "ok"})
	dir, home, sessDir := t.TempDir(), t.TempDir(), t.TempDir()
	text := `{"providers": {"local": {"baseUrl": "` + srv.URL + `", "api": "openai-completions", "apiKey": "none",
  "models": [{"id": "deep", "reasoning": true}, {"id": "wide", "reasoning": true}, {"id": "qwen:high"}]}}}`
	if err := os.WriteFile(filepath.Join(home, "models.json"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Model: app.ModelOptions{Scope: []string{"local/deep:low", "wide", "qwen:high", "nothing:high"}}})
	c := open(t, rt, Options{Session: &SessionOptions{Dir: sessDir}})
	if m, _ := c.Model(); m.Ref() != "local/deep" || c.ThinkingLevel() != llm.ThinkingLow {
		t.Fatalf("started at %s %s, want local/deep low", m.Ref(), c.ThinkingLevel())
	}
	avail, err := c.AvailableModels()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ScopeModels(avail, rt.ModelOptions().Scope) {
		got = append(got, m.Ref()+"="+string(m.Level))
	}
	if strings.Join(got, " ") != "local/deep=low local/wide= local/qwen:high=" {
		t.Errorf("scope %v", got)
	}
	if _, err := c.SetThinkingLevel("high"); err != nil {
		t.Fatal(err)
	}
	res, err := c.CycleModel()
	if err != nil || res == nil || res.Model.ID != "wide" || res.ThinkingLevel != llm.ThinkingHigh {
		t.Fatalf("cycle to wide: %+v %v", res, err)
	}
	if _, err := c.CycleModel(); err != nil {
		t.Fatal(err)
	}
	res, err = c.CycleModel()
	if err != nil || res.Model.ID != "deep" || res.ThinkingLevel != llm.ThinkingLow {
		t.Fatalf("cycle back to deep: %+v %v", res, err)
	}
	if got := c.Session().ThinkingLevel(); got != "low" {
		t.Errorf("the session's level %q", got)
	}
}

// -c of a session without a model_change (one the reference or an older
// pi wrote) goes on with its last assistant message's model, and without
// a thinking_level_change at the reasoning model's default level.
func TestContinueRestoresTheAssistantsModel(t *testing.T) {
	dir, home, sessDir := t.TempDir(), t.TempDir(), t.TempDir()
	text := `{"providers": {"local": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "none",
  "models": [{"id": "deep", "reasoning": true}, {"id": "wide", "reasoning": true}]}}}`
	if err := os.WriteFile(filepath.Join(home, "models.json"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := session.Create(session.CreateOptions{Cwd: dir, Dir: sessDir})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []session.Message{
		{Role: session.RoleUser, Content: []session.Block{{Type: "text", Text: "hi"}}},
		{Role: session.RoleAssistant, Content: []session.Block{{Type: "text", Text: "hello"}}, API: "openai-completions", Provider: "local", Model: "wide", StopReason: "stop"},
	} {
		if _, err := s.AppendMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home})
	c := open(t, rt, Options{Session: &SessionOptions{Dir: sessDir, Continue: true}})
	if m, err := c.Model(); err != nil || m.Ref() != "local/wide" {
		t.Fatalf("resumed with %s (%v), want local/wide", m.Ref(), err)
	}
	if got := c.ThinkingLevel(); got != llm.ThinkingMedium {
		t.Errorf("level %s, want the default medium", got)
	}
}
