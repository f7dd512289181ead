package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/anthropic"

	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
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

const keyCtrlT = "\x14"

// A reasoning model's thinking is printed as one dim line (its first line
// and how many more) until Ctrl+T shows it whole, from the next block on;
// the model is a real Anthropic provider on the loopback Messages server.
func TestThinkingShownCollapsed(t *testing.T) {
	srv := anthropic.NewServer(t,
		anthropic.Reply{Chunks: 3, Blocks: []anthropic.Block{
			{Type: "thinking", Text: "The user says hi.\nA greeting back will do.", Signature: "sig-1"},
			{Type: "text", Text: "Hello there."},
		}},
		anthropic.Reply{Blocks: []anthropic.Block{
			{Type: "thinking", Text: "Second question.\nAnswer with care.", Signature: "sig-2"},
			{Type: "text", Text: "Fine, thanks."},
		}},
	)
	home := t.TempDir()
	text := `{"providers": {"claude": {"baseUrl": "` + srv.URL + `", "api": "anthropic-messages", "apiKey": "none",
  "models": [{"id": "c", "reasoning": true}]}}}`
	if err := os.WriteFile(filepath.Join(home, "models.json"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	tt := startTUI(t, termOptions{home: home, model: &app.ModelOptions{Name: "claude/c"}})
	tt.typ("hi", keyEnter)
	tt.waitFor("∴ The user says hi. (+1 line, Ctrl+T shows thinking)")
	tt.waitFor("Hello there.")
	tt.typ(keyCtrlT)
	tt.waitFor("thinking shown whole")
	tt.typ("how are you", keyEnter)
	screen := tt.waitFor("Fine, thanks.")
	if !strings.Contains(screen, "Second question.") || !strings.Contains(screen, "Answer with care.") || strings.Contains(screen, "∴ Second question.") {
		t.Errorf("the second thinking is not shown whole:\n%s", tail(screen, 600))
	}
	// The thinking went back to the model with its signature.
	body, _ := json.Marshal(srv.Requests()[1].JSON["messages"])
	if !strings.Contains(string(body), `"signature":"sig-1"`) {
		t.Errorf("second request's messages lack the first thinking's signature: %s", body)
	}
	tt.exit()
}

// A resumed session's thinking is replayed as the dim line too.
func TestResumedThinkingShown(t *testing.T) {
	tt := startTUI(t, termOptions{})
	dir := session.DirFor(session.DefaultDir(tt.home), tt.dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data := `{"type":"session","version":3,"id":"01a24dce-7b1f-7000-8000-0000000000aa","timestamp":"2025-06-15T12:00:00.000Z","cwd":"` + tt.dir + `"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2025-06-15T12:00:01.000Z","message":{"role":"user","content":"hi"}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-06-15T12:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Old thought.\nSecond line.\nThird.","thinkingSignature":"sig"},{"type":"text","text":"Old answer."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2}}}
`
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	tt.typ("/resume 01a24dce-7b1f", keyEnter)
	tt.waitFor("(resumed session")
	tt.waitFor("∴ Old thought. (+2 lines, Ctrl+T shows thinking)")
	tt.waitFor("Old answer.")
	tt.exit()
}
