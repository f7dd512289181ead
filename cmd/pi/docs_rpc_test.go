package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every command example of docs/rpc.md is answered by pi --mode rpc under
// its own name, never as an unknown or unparsable command; the examples
// the page gives for an empty project succeed. Every JSON line the page
// shows is JSON.
func TestDocsRPCExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "rpc.md"))
	if err != nil {
		t.Fatal(err)
	}
	var commands []map[string]any
	for _, block := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		for _, line := range strings.Split(strings.TrimSpace(block[1]), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.ReplaceAll(line, "…", "")), &m); err != nil {
				t.Errorf("docs/rpc.md: not JSON: %s (%v)", line, err)
				continue
			}
			switch m["type"] {
			case "response", "queue_update", "extension_ui_request", "extension_ui_response", "message_end":
			default:
				commands = append(commands, m)
			}
		}
	}
	// The inline examples of set_model, switch_session and fork.
	for _, inline := range regexp.MustCompile("`(\\{\"type\":\"[a-z_]+\"[^`]*\\})`").FindAllStringSubmatch(string(doc), -1) {
		var m map[string]any
		if err := json.Unmarshal([]byte(inline[1]), &m); err != nil {
			t.Errorf("docs/rpc.md: not JSON: %s", inline[1])
			continue
		}
		m["id"] = "inline-" + m["type"].(string)
		commands = append(commands, m)
	}
	if len(commands) < 20 {
		t.Fatalf("docs/rpc.md has %d command examples", len(commands))
	}
	turns := strings.Repeat(`{"text":"ok"},`, 12)
	dir := t.TempDir()
	p := startRPC(t, "", "--no-session", "--cwd", dir, "--script", writeScript(t, `{"turns":[`+turns+`{"text":"## Goal\nsummary"}]}`))
	mustSucceed := map[string]bool{}
	for _, c := range strings.Fields("prompt steer follow_up abort get_state get_messages get_commands get_available_models set_steering_mode set_follow_up_mode bash abort_bash get_session_stats get_fork_messages get_last_assistant_text set_session_name clone new_session") {
		mustSucceed[c] = true
	}
	for _, c := range commands {
		b, _ := json.Marshal(c)
		p.send(string(b))
		id, _ := c["id"].(string)
		r := p.response(id)
		typ := c["type"].(string)
		errText, _ := r["error"].(string)
		if r["command"] != typ || strings.HasPrefix(errText, "Unknown command") || strings.HasPrefix(errText, "Failed to parse") {
			t.Errorf("%s: %v", b, r)
		}
		if mustSucceed[typ] && r["success"] != true {
			t.Errorf("%s failed: %v", b, r)
		}
		if typ == "prompt" && c["streamingBehavior"] == nil {
			p.expect("agent_end", isType("agent_end"))
		}
	}
}
