package tui

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
)

const (
	keyShiftTab = "\x1b[Z"
	keyCtrlP    = "\x10"
)

// Shift+Tab cycles the thinking level (the status line shows it), Ctrl+P
// the --models scope, and /model without a name opens a list of the
// usable models to pick from.
func TestThinkingAndModelKeys(t *testing.T) {
	home := t.TempDir()
	text := `{"providers": {"local": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "none",
  "models": [{"id": "deep", "reasoning": true}, {"id": "flat"}]}}}`
	if err := os.WriteFile(filepath.Join(home, "models.json"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	tt := startTUI(t, termOptions{home: home, model: &app.ModelOptions{Name: "local/deep", Scope: []string{"local/deep", "local/flat"}}})
	tt.waitFor("deep • medium")
	tt.typ(keyShiftTab)
	tt.waitFor("deep • high")
	if got := tt.conv.ThinkingLevel(); got != llm.ThinkingHigh {
		t.Errorf("level %s after Shift+Tab", got)
	}
	tt.typ(keyCtrlP)
	tt.waitFor("model local/flat")
	if m, _ := tt.conv.Model(); m.ID != "flat" {
		t.Errorf("model %s after Ctrl+P", m.ID)
	}
	tt.typ(keyShiftTab)
	tt.waitFor("the model has no thinking levels")
	tt.typ("/model", keyEnter)
	tt.waitFor("Switch the model (now local/flat")
	tt.typ(keyEnter)
	// Leaving a model without reasoning goes back to the default level.
	tt.waitFor("✓ model local/deep (thinking medium)")
	tt.exit()
}
