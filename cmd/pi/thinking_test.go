package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/anthropic"
)

// A reasoning model's thinking in the two print modes: --mode json
// writes the reference's thinking_start, thinking_delta and thinking_end
// message updates and the thinking block (with its signature) in
// message_end; text mode prints the answer only, never the thinking.
func TestThinkingInPrintModes(t *testing.T) {
	home := isolate(t)
	reply := anthropic.Reply{Chunks: 2, Blocks: []anthropic.Block{
		{Type: "thinking", Text: "Secret plan: greet.", Signature: "sig-Z=="},
		{Type: "text", Text: "Hello!"},
	}}
	srv := anthropic.NewServer(t, reply, reply)
	os.WriteFile(filepath.Join(home, "models.json"), thinkingModels(srv.URL), 0o600)
	dir := t.TempDir()

	var stdout, stderr bytes.Buffer
	if code := run([]string{"--mode", "json", "--model", "claude/c1", "--no-session", "-p", "hi", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var updates []string
	var end string
	for _, line := range strings.Split(stdout.String(), "\n") {
		var ev struct {
			Type  string          `json:"type"`
			Event json.RawMessage `json:"assistantMessageEvent"`
			Msg   struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		switch {
		case ev.Type == "message_update":
			updates = append(updates, string(ev.Event))
		case ev.Type == "message_end" && ev.Msg.Role == "assistant":
			end = string(ev.Msg.Content)
		}
	}
	want := []string{
		`{"type":"thinking_start","contentIndex":0}`,
		`{"type":"thinking_delta","contentIndex":0,"delta":"Secret pla"}`,
		`{"type":"thinking_delta","contentIndex":0,"delta":"n: greet."}`,
		`{"type":"thinking_end","contentIndex":0,"content":"Secret plan: greet."}`,
		`{"type":"text_delta","contentIndex":1,"delta":"Hel"}`,
		`{"type":"text_delta","contentIndex":1,"delta":"lo!"}`,
	}
	if strings.Join(updates, "\n") != strings.Join(want, "\n") {
		t.Errorf("message updates:\n%s\nwant\n%s", strings.Join(updates, "\n"), strings.Join(want, "\n"))
	}
	if end != `[{"type":"thinking","thinking":"Secret plan: greet.","thinkingSignature":"sig-Z=="},{"type":"text","text":"Hello!"}]` {
		t.Errorf("message_end content %s", end)
	}

	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"--model", "claude/c1", "--no-session", "-p", "hi", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if stdout.String() != "Hello!\n" || strings.Contains(stderr.String(), "Secret") {
		t.Errorf("text mode printed %q (stderr %q)", stdout.String(), stderr.String())
	}
}
