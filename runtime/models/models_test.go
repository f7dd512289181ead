package models

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/llm"
)

func TestCatalogue(t *testing.T) {
	r := Builtin()
	for _, name := range []string{"anthropic", "openai", "google", "openrouter", "deepseek", "groq", "xai", "mistral"} {
		p := r.Provider(name)
		if p == nil {
			t.Fatalf("provider %s missing from the catalogue", name)
		}
		if _, ok := p.Model(p.DefaultModel); !ok {
			t.Errorf("%s: default model %q not in the catalogue", name, p.DefaultModel)
		}
		if len(p.KeyEnv) == 0 || p.BaseURL == "" || p.API == "" {
			t.Errorf("%s: key env %v, base URL %q, api %q", name, p.KeyEnv, p.BaseURL, p.API)
		}
	}
	m, _, ok := r.Find("anthropic/claude-sonnet-4-5")
	if !ok || m.API != APIAnthropicMessages || m.BaseURL != "https://api.anthropic.com" || !m.Reasoning || m.Cost.Input != 3 || m.ContextWindow != 200000 {
		t.Errorf("claude-sonnet-4-5 = %+v", m)
	}
	if got := r.Provider("anthropic").KeyEnv; !slices.Equal(got, []string{"ANTHROPIC_API_KEY"}) {
		t.Errorf("anthropic key env = %v", got)
	}
}

func TestLevels(t *testing.T) {
	plain := Model{Reasoning: false}
	if got := plain.Levels(); !slices.Equal(got, []llm.ThinkingLevel{"off"}) {
		t.Errorf("no reasoning: %v", got)
	}
	if got := plain.Clamp(llm.ThinkingHigh); got != llm.ThinkingOff {
		t.Errorf("no reasoning clamps high to %s", got)
	}
	r := Model{Reasoning: true}
	if got := r.Levels(); !slices.Equal(got, []llm.ThinkingLevel{"off", "minimal", "low", "medium", "high"}) {
		t.Errorf("reasoning: %v", got)
	}
	if got := r.Clamp(llm.ThinkingXHigh); got != llm.ThinkingHigh {
		t.Errorf("xhigh without xhigh: %s", got)
	}
	if got := r.NextLevel(llm.ThinkingHigh); got != llm.ThinkingOff {
		t.Errorf("cycle wraps: %s", got)
	}
	max := "max"
	x := Model{Reasoning: true, ThinkingLevelMap: map[llm.ThinkingLevel]*string{"off": nil, "minimal": nil, "xhigh": &max}}
	if got := x.Levels(); !slices.Equal(got, []llm.ThinkingLevel{"low", "medium", "high", "xhigh"}) {
		t.Errorf("mapped: %v", got)
	}
	if got := x.Clamp(llm.ThinkingOff); got != llm.ThinkingLow {
		t.Errorf("off unsupported clamps up to %s", got)
	}
}

func TestCostOf(t *testing.T) {
	m := Model{Cost: Cost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	c := m.CostOf(llm.Usage{InputTokens: 1000, OutputTokens: 2000, CacheReadTokens: 10000, CacheWriteTokens: 4000})
	want := llm.Cost{Input: 0.003, Output: 0.03, CacheRead: 0.003, CacheWrite: 0.015}
	want.Total = want.Input + want.Output + want.CacheRead + want.CacheWrite
	for _, p := range [][2]float64{{c.Input, want.Input}, {c.Output, want.Output}, {c.CacheRead, want.CacheRead}, {c.CacheWrite, want.CacheWrite}, {c.Total, want.Total}} {
		if math.Abs(p[0]-p[1]) > 1e-12 {
			t.Errorf("cost = %+v, want %+v", c, want)
		}
	}
}

func TestLoadMerges(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, FileName), []byte(`{
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1",
      "api": "openai-completions",
      "apiKey": "ollama",
      "models": [{"id": "llama3.1:8b"}, {"id": "gpt-oss:20b", "reasoning": true, "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}}]
    },
    "anthropic": {
      "baseUrl": "https://proxy.example.com",
      "modelOverrides": {"claude-sonnet-4-5": {"name": "Sonnet via proxy", "cost": {"input": 1}}},
      "models": [{"id": "claude-custom", "contextWindow": 1000}]
    }
  }
}`), 0o600)
	r, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	m, _, ok := r.Find("ollama/llama3.1:8b")
	if !ok || m.API != APIOpenAICompletions || m.ContextWindow != DefaultContextWindow || m.MaxTokens != DefaultMaxTokens || !slices.Equal(m.Input, []string{"text"}) || m.Name != "llama3.1:8b" {
		t.Errorf("ollama model = %+v", m)
	}
	if k, src := r.Provider("ollama").Key(func(string) string { return "" }); k != "ollama" || src != "models.json" {
		t.Errorf("literal key = %q from %q", k, src)
	}
	if k, src := r.Provider("ollama").Key(func(n string) string { return map[string]string{"ollama": "from-env"}[n] }); k != "from-env" || src != "ollama" {
		t.Errorf("env key = %q from %q", k, src)
	}
	s, _, _ := r.Find("anthropic/claude-sonnet-4-5")
	if s.Name != "Sonnet via proxy" || s.Cost.Input != 1 || s.Cost.Output != 15 || s.BaseURL != "https://proxy.example.com" {
		t.Errorf("override = %+v", s)
	}
	c, _, ok := r.Find("claude-custom")
	if !ok || c.API != APIAnthropicMessages || c.Provider != "anthropic" || c.ContextWindow != 1000 {
		t.Errorf("custom model on a built-in provider = %+v", c)
	}
	if _, amb, ok := r.Find("qwen/qwen3-32b"); ok || len(amb) < 2 {
		t.Errorf("ambiguous bare id: ok %v, providers %v", ok, amb)
	}
}

func TestParseFileErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{"{\n  \"providers\": {\n    \"x\": {\"baseUrl\": 3}\n  }\n}", "models.json:3: providers.x.baseUrl: want a string, got a number"},
		{"{\n  \"providers\": {\n    \"x\": {\"baseUrl\": \"http://h\", \"apiKey\": \"k\", \"api\": \"openai-completions\",\n      \"models\": [\n        {\"id\": \"a\", \"contextWindow\": 0}\n      ]}}}", "models.json:5: providers.x.models[0].contextWindow: want a whole number of tokens above 0, got 0"},
		{"{\n  \"providers\": {\n    \"x\": {\"apiKey\": \"k\", \"api\": \"openai-completions\", \"models\": [{\"id\": \"a\"}]}}}", "models.json:3: providers.x.baseUrl: missing"},
		{"{\n  \"providers\": {\n    \"x\": {\"baseUrl\": \"http://h\", \"apiKey\": \"k\",\n \"models\": [{\"id\": \"a\"}]}}}", "models.json:4: providers.x.models[0].api: missing"},
		{"{\n  \"providers\": {\n    \"x\": {\"baseUrl\": \"http://h\", \"apiKey\": \"k\", \"api\": \"a\",\n \"models\": [{\"id\": \"a\",\n \"input\": [\"text\", \"video\"]}]}}}", "models.json:5: providers.x.models[0].input[1]: want \"text\" or \"image\""},
		{"{\n  \"providers\": {\n    \"x\": {\"baseUrl\": \"http://h\", \"apiKey\": \"k\", \"api\": \"a\",\n \"models\": [{\"id\": \"a\",\n \"cost\": {\"input\": 1}}]}}}", "models.json:5: providers.x.models[0].cost.output: missing"},
		{"{\n  \"providers\": {\n    \"x\": {\"baseUrl\": \"http://h\",\n \"models\": [{\"id\": \"a\", \"thinkingLevelMap\": {\"max\": \"x\"}}]}}}", "models.json:4: providers.x.models[0].thinkingLevelMap.max: not a thinking level"},
		{"{\n  \"providers\": {\n    \"x\": {\"baseUrl\": \"http://h\",,}\n}}", "models.json:3: invalid JSON"},
		{"{\"provider\": {}}", "models.json:1: providers: missing"},
	}
	for _, c := range cases {
		_, err := ParseFile("models.json", []byte(c.text))
		var fe *FileError
		if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParseFile(%q) = %v, want %q…", c.text, err, c.want)
		}
	}
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, FileName), []byte("{\n\"providers\": {\"x\": 1}}"), 0o600)
	if _, err := Load(home); err == nil || !strings.Contains(err.Error(), filepath.Join(home, FileName)+":2: providers.x: want an object") {
		t.Errorf("Load = %v", err)
	}
}

// Every models-file example of docs/models.md is a valid models file.
func TestDocsExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "models.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(doc), "## The models file")
	rest, _, _ = strings.Cut(rest, "## Providers (wire)")
	n := 0
	for {
		var ok bool
		_, rest, ok = strings.Cut(rest, "```json\n")
		if !ok {
			break
		}
		var example string
		example, rest, _ = strings.Cut(rest, "```")
		if _, err := ParseFile("docs example", []byte(example)); err != nil {
			t.Errorf("%v\n%s", err, example)
		}
		n++
	}
	if n < 4 {
		t.Errorf("%d examples checked", n)
	}
}

// BenchmarkDecodeCatalogue is what the first model resolution of a run
// pays for the catalogue (runtime/app's Open resolves every provider's
// key).
func BenchmarkDecodeCatalogue(b *testing.B) {
	for i := 0; i < b.N; i++ {
		decodeCatalogue()
	}
}

// BenchmarkLoad is a models-file read and merge over the catalogue
// (decoded once).
func BenchmarkLoad(b *testing.B) {
	home := b.TempDir()
	os.WriteFile(filepath.Join(home, FileName), []byte(`{"providers": {"ollama": {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "ollama", "models": [{"id": "qwen2.5-coder:7b"}]}}}`), 0o600)
	for i := 0; i < b.N; i++ {
		if _, err := Load(home); err != nil {
			b.Fatal(err)
		}
	}
}

// Every catalogue provider has its key variables; Secrets finds every
// key set, of the catalogue's providers and the file's, without decoding
// the catalogue.
func TestSecrets(t *testing.T) {
	for _, p := range Builtin().Providers {
		if len(p.KeyEnv) == 0 {
			t.Errorf("catalogue provider %s has no key variable", p.Name)
		}
	}
	if len(keyEnv) != len(Builtin().Providers) {
		t.Errorf("%d key variable entries, %d catalogue providers", len(keyEnv), len(Builtin().Providers))
	}
	f, err := ParseFile("m.json", []byte(`{"providers": {"local": {"baseUrl": "http://h", "apiKey": "LOCAL_VAR", "api": "openai-completions", "models": [{"id": "a"}]},
  "lit": {"baseUrl": "http://h", "apiKey": "a-literal-key-0123456789", "api": "openai-completions", "models": [{"id": "b"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GROQ_API_KEY": "groq-key-0123456789", "LOCAL_VAR": "local-key-0123456789"}
	keys, vars := Secrets(f, func(n string) string { return env[n] })
	for _, k := range []string{"groq-key-0123456789", "local-key-0123456789", "a-literal-key-0123456789"} {
		if !slices.Contains(keys, k) {
			t.Errorf("keys %v lack %s", keys, k)
		}
	}
	for _, v := range []string{"GROQ_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "LOCAL_VAR"} {
		if !slices.Contains(vars, v) {
			t.Errorf("variables %v lack %s", vars, v)
		}
	}
}
