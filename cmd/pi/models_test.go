package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/session"
)

// writeModelsFile writes $PI_HOME/models.json with provider "local" on
// url: model "qwen" (reasoning, priced) and "plain".
func writeModelsFile(t *testing.T, home, url string) {
	t.Helper()
	text := `{"providers": {"local": {
  "baseUrl": "` + url + `", "api": "openai-completions", "apiKey": "local-literal-key-0123456789",
  "models": [
    {"id": "qwen", "reasoning": true, "contextWindow": 32000, "cost": {"input": 2, "output": 10, "cacheRead": 0.5, "cacheWrite": 0}},
    {"id": "plain"}
  ]}}}`
	if err := os.WriteFile(filepath.Join(home, "models.json"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// pi models lists the providers, usable or why not (the variable to
// set), and the usable models; a broken models file is an error with its
// line and field.
func TestModelsCommand(t *testing.T) {
	home := isolate(t)
	writeModelsFile(t, home, "http://127.0.0.1:9/v1")
	r := runCLI(t, "", "models")
	r.check(t, 0, "local/qwen", "")
	for _, want := range []string{"groq ", "no key: set GROQ_API_KEY", "local/plain", "reasoning", "(models.json)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("pi models lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "groq/openai/gpt-oss-120b") {
		t.Errorf("pi models lists a model of a provider without key:\n%s", r.stdout)
	}
	runCLI(t, "", "models", "--provider", "groq").check(t, 0, "groq/openai/gpt-oss-120b", "")
	runCLI(t, "", "models", "--provider", "nope").check(t, exitUsage, "", `unknown provider "nope"`)
	os.WriteFile(filepath.Join(home, "models.json"), []byte("{\"providers\": {\n  \"x\": {\"baseUrl\": \"http://h\", \"apiKey\": \"k\",\n    \"models\": [{\"id\": \"a\", \"maxTokens\": -1}]}}}"), 0o600)
	runCLI(t, "", "models").check(t, exitError, "", filepath.Join(home, "models.json")+":3: providers.x.models[0].maxTokens: want a whole number of tokens above 0, got -1")
}

// A model of the models file is used end to end: --model PROVIDER/ID
// goes to the provider's baseUrl with its key; --thinking is recorded in
// the session as the reference records it; pi -c restores the model and
// the level without flags; the cost of each answer is priced from the
// file's prices.
func TestModelsFileModelAndResume(t *testing.T) {
	home := isolate(t)
	dir := t.TempDir()
	srv := openai.NewServer(t,
		openai.Reply{Text: "one", Usage: &openai.Usage{PromptTokens: 1000, CompletionTokens: 100}},
		openai.Reply{Text: "two"},
	)
	writeModelsFile(t, home, srv.URL)
	r := runCLI(t, "", "--cwd", dir, "-p", "hi", "--model", "local/qwen:high")
	r.check(t, 0, "one", "")
	h := srv.Headers()[0].Get("Authorization")
	if h != "Bearer local-literal-key-0123456789" {
		t.Errorf("Authorization %q", h)
	}
	if got := srv.Requests()[0]["model"]; got != "qwen" {
		t.Errorf("model %v", got)
	}
	files := sessionFiles(t, home, dir)
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	s, err := session.Read(files[0], session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p, m := s.Model(); p != "local" || m != "qwen" {
		t.Errorf("session model %s/%s", p, m)
	}
	if l := s.ThinkingLevel(); l != "high" {
		t.Errorf("session thinking level %q", l)
	}
	msgs := s.Context()
	last := msgs[len(msgs)-1]
	if last.Usage == nil || last.Usage.Cost.Input != 0.002 || last.Usage.Cost.Output != 0.001 || last.Usage.Cost.Total != 0.003 {
		t.Errorf("usage %+v", last.Usage)
	}
	b, _ := os.ReadFile(files[0])
	if !strings.Contains(string(b), `{"type":"thinking_level_change","id":`) || !strings.Contains(string(b), `"thinkingLevel":"high"}`) {
		t.Errorf("no thinking_level_change entry in\n%s", b)
	}

	// -c without model flags: the session's model and level come back.
	os.WriteFile(filepath.Join(dir, "pi.toml"), []byte("[model]\nname = \"plain\"\nprovider = \"local\"\n"), 0o600)
	r = runCLI(t, "", "--cwd", dir, "-c", "-p", "again")
	r.check(t, 0, "two", "")
	if got := srv.Requests()[1]["model"]; got != "qwen" {
		t.Errorf("resumed request model %v, want the session's qwen", got)
	}
	s, _ = session.Read(files[0], session.OpenOptions{})
	if p, m := s.Model(); p != "local" || m != "qwen" || s.ThinkingLevel() != "high" {
		t.Errorf("after -c: %s/%s at %q", p, m, s.ThinkingLevel())
	}
}

// --mode json's message_end and agent_end carry the usage with its cost
// (the reference's shape); pi sessions list --cost shows each session's.
func TestCostInJSONModeAndSessionsList(t *testing.T) {
	home := isolate(t)
	dir := t.TempDir()
	srv := openai.NewServer(t, openai.Reply{Text: "one", Usage: &openai.Usage{PromptTokens: 1000, CompletionTokens: 100}})
	writeModelsFile(t, home, srv.URL)
	r := runCLI(t, "", "--cwd", dir, "--mode", "json", "-p", "hi", "--model", "local/qwen")
	r.check(t, 0, `"type":"message_end"`, "")
	var end, agentEnd string
	for _, l := range strings.Split(r.stdout, "\n") {
		switch {
		case strings.Contains(l, `"type":"message_end"`) && strings.Contains(l, `"role":"assistant"`):
			end = l
		case strings.Contains(l, `"type":"agent_end"`):
			agentEnd = l
		}
	}
	want := `"cost":{"input":0.002,"output":0.001,"cacheRead":0,"cacheWrite":0,"total":0.003}`
	if !strings.Contains(end, want) || !strings.Contains(agentEnd, want) {
		t.Errorf("message_end %s\nagent_end %s\nwant %s", end, agentEnd, want)
	}
	r = runCLI(t, "", "sessions", "list", "--cwd", dir, "--cost")
	r.check(t, 0, "$0.0030", "")
	r = runCLI(t, "", "sessions", "list", "--cwd", dir, "--cost", "--json")
	r.check(t, 0, `"cost": 0.003`, "")
}
