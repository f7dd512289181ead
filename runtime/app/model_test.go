package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/models"
)

// TestResolveProviders follows the resolution order of ResolveModel with
// the catalogue and a real models file.
func TestResolveProviders(t *testing.T) {
	for _, v := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "CEREBRAS_API_KEY", "ZAI_API_KEY", "MOONSHOT_API_KEY", "HF_TOKEN", "FIREWORKS_API_KEY", "MINIMAX_API_KEY", "LOCAL_KEY"} {
		t.Setenv(v, "")
	}
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, models.FileName), []byte(`{"providers": {"local": {
  "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "LOCAL_KEY",
  "models": [{"id": "qwen", "reasoning": true, "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}}]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := models.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	cfg := func(m config.Model) *config.Config { return &config.Config{Model: m} }

	_, err = ResolveModel(cfg(config.Model{}), reg, ModelOptions{Name: "anthropic/claude-sonnet-4-5"})
	if !errors.Is(err, ErrNoModel) || !strings.Contains(err.Error(), "set ANTHROPIC_API_KEY") {
		t.Errorf("no anthropic key: %v", err)
	}
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-0123456789abcdef")
	s, err := ResolveModel(cfg(config.Model{}), reg, ModelOptions{Name: "anthropic/claude-sonnet-4-5"})
	if err != nil || s.Model.API != models.APIAnthropicMessages || s.BaseURL != "https://api.anthropic.com" || s.KeySource != "ANTHROPIC_API_KEY" || s.Name != "claude-sonnet-4-5" {
		t.Errorf("--model anthropic/claude-sonnet-4-5: %+v, %v", s, err)
	}
	if s, err := ResolveModel(cfg(config.Model{}), reg, ModelOptions{Provider: "anthropic"}); err != nil || s.Name != "claude-opus-4-7" {
		t.Errorf("--provider alone takes the default model: %+v, %v", s.Name, err)
	}
	if s, err := ResolveModel(cfg(config.Model{}), reg, ModelOptions{}); err != nil || s.Model.Provider != "anthropic" {
		t.Errorf("nothing configured picks the provider with a key: %+v, %v", s.Model.Ref(), err)
	}
	if s, err := ResolveModel(cfg(config.Model{Provider: "local", Name: "qwen"}), reg, ModelOptions{}); err != nil || s.Model.Ref() != "local/qwen" || s.APIKey != "LOCAL_KEY" || s.KeySource != "models.json" || !s.Model.Reasoning {
		t.Errorf("pi.toml provider: %+v, %v", s, err)
	}
	t.Setenv("LOCAL_KEY", "local-secret-0123456789")
	if s, err := ResolveModel(cfg(config.Model{}), reg, ModelOptions{Name: "qwen"}); err != nil || s.Model.Ref() != "local/qwen" || s.APIKey != "local-secret-0123456789" || s.KeySource != "LOCAL_KEY" {
		t.Errorf("bare id of one provider: %+v, %v", s, err)
	}
	if _, err := ResolveModel(cfg(config.Model{}), reg, ModelOptions{Name: "qwen/qwen3-32b"}); err == nil || !strings.Contains(err.Error(), "groq/qwen/qwen3-32b") {
		t.Errorf("an id two providers list: %v", err)
	}
	if _, err := ResolveModel(cfg(config.Model{}), reg, ModelOptions{Provider: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown provider "nope"`) {
		t.Errorf("unknown provider: %v", err)
	}
	s, err = ResolveModel(cfg(config.Model{}), reg, ModelOptions{Name: "qwen", BaseURL: "http://127.0.0.1:9/v1"})
	if err != nil || s.Model.Provider != "local" || !s.Model.Reasoning || s.KeySource != "OPENAI_API_KEY" {
		t.Errorf("an endpoint by URL takes the facts of the provider there, the key as before: %+v, %v", s, err)
	}
	if err := ModelUsable(reg, mustModel(t, reg, "google/gemini-2.5-pro")); err == nil || !strings.Contains(err.Error(), "not built in this version") && !strings.Contains(err.Error(), "set GEMINI_API_KEY") {
		t.Errorf("gemini usable: %v", err)
	}
}

func mustModel(t *testing.T, reg *models.Registry, ref string) models.Model {
	t.Helper()
	m, _, ok := reg.Find(ref)
	if !ok {
		t.Fatalf("%s not in the registry", ref)
	}
	return m
}

// Every provider's key is hidden from commands and redacted, not only the
// key of the model in use: bash does not see ANTHROPIC_API_KEY nor the
// variable models.json names, and a literal key of models.json is
// redacted in what a command prints.
func TestEveryProviderKeyIsSecret(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-secret-0123456789")
	t.Setenv("LOCAL_VAR", "local-secret-0123456789")
	os.WriteFile(filepath.Join(home, models.FileName), []byte(`{"providers": {
  "a": {"baseUrl": "http://h", "apiKey": "LOCAL_VAR", "api": "openai-completions", "models": [{"id": "x"}]},
  "b": {"baseUrl": "http://h", "apiKey": "literal-secret-0123456789", "api": "openai-completions", "models": [{"id": "y"}]}}}`), 0o600)
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res, err := rt.CallTool(context.Background(), "bash", "c1", []byte(`{"command":"echo A=$ANTHROPIC_API_KEY L=$LOCAL_VAR; echo literal-secret-0123456789"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := res.Text()
	if !strings.Contains(out, "A= L=") || strings.Contains(out, "literal-secret") || !strings.Contains(out, "[REDACTED]") {
		t.Errorf("bash printed %q", out)
	}
}
