package conversation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/llm"
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
