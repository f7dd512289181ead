package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Over RPC: get_tree lists the entries with the leaf marked; set_label
// labels the leaf; navigate_tree with summarize writes a branch summary
// at the first answer, which the next get_messages and get_tree show.
func TestRPCTree(t *testing.T) {
	dir := t.TempDir()
	p := startRPC(t, "", "--no-session", "--cwd", dir, "--script", writeScript(t, `{"turns":[{"text":"first answer"},{"text":"A answer"},{"text":"SUMMARY OF A"}]}`))
	prompt := func(id, text string) {
		p.send(`{"id":"` + id + `","type":"prompt","message":"` + text + `"}`)
		p.response(id)
		p.expect("agent_end", isType("agent_end"))
	}
	tree := func(id string) (string, []map[string]any) {
		p.send(`{"id":"` + id + `","type":"get_tree"}`)
		r := p.response(id)
		data := r["data"].(map[string]any)
		var lines []map[string]any
		for _, l := range data["entries"].([]any) {
			lines = append(lines, l.(map[string]any))
		}
		return data["leafId"].(string), lines
	}
	prompt("p1", "hello")
	_, lines := tree("t1")
	var firstAnswer string
	for _, l := range lines {
		if l["kind"] == "assistant" {
			firstAnswer = l["entryId"].(string)
		}
	}
	p.send(`{"id":"l1","type":"set_label","label":"start"}`)
	if r := p.response("l1"); r["success"] != true {
		t.Fatalf("set_label: %v", r)
	}
	prompt("p2", "try A")
	p.send(`{"id":"n1","type":"navigate_tree","entryId":"` + firstAnswer + `","summarize":true}`)
	r := p.response("n1")
	if r["success"] != true {
		t.Fatalf("navigate_tree: %v", r)
	}
	sumID, _ := r["data"].(map[string]any)["summaryEntryId"].(string)
	p.send(`{"id":"m1","type":"get_messages"}`)
	msgs, _ := json.Marshal(p.response("m1")["data"])
	if !strings.Contains(string(msgs), `"role":"branchSummary"`) || !strings.Contains(string(msgs), "SUMMARY OF A") || strings.Contains(string(msgs), "A answer") {
		t.Fatalf("messages after navigate_tree: %s", msgs)
	}
	leaf, lines := tree("t2")
	var sawLabel, sawSummary bool
	for _, l := range lines {
		if l["entryId"] == firstAnswer && l["label"] == "start" {
			sawLabel = true
		}
		if l["entryId"] == sumID && l["kind"] == "branch_summary" && l["current"] == true {
			sawSummary = true
		}
	}
	if !sawLabel || !sawSummary || leaf != sumID {
		t.Fatalf("tree after navigate_tree (leaf %s, summary %s): %v", leaf, sumID, lines)
	}
	p.send(`{"id":"n2","type":"navigate_tree","entryId":"nope"}`)
	if r := p.response("n2"); r["success"] != false || !strings.Contains(r["error"].(string), `entry "nope": no such entry`) {
		t.Fatalf("navigate to an unknown entry: %v", r)
	}
}

// Over RPC: a turn that writes a file is listed by get_turns; undo
// removes the file and the turn's conversation; redo brings both back.
func TestRPCUndoRedo(t *testing.T) {
	dir := t.TempDir()
	p := startRPC(t, "", "--session-dir", t.TempDir(), "--cwd", dir, "--script", writeScript(t, `{"turns":[{"toolCalls":[{"name":"write","arguments":{"path":"made.txt","content":"made"}}]},{"text":"wrote it"}]}`))
	p.send(`{"id":"p1","type":"prompt","message":"make a file"}`)
	p.response("p1")
	p.expect("agent_end", isType("agent_end"))
	p.send(`{"id":"t1","type":"get_turns"}`)
	turns, _ := json.Marshal(p.response("t1")["data"])
	if !strings.Contains(string(turns), `"prompt":"make a file"`) || !strings.Contains(string(turns), `{"files":[{"kind":"created","path":"made.txt"}]`) {
		t.Fatalf("get_turns: %s", turns)
	}
	p.send(`{"id":"u1","type":"undo"}`)
	if r := p.response("u1"); r["success"] != true {
		t.Fatalf("undo: %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("made.txt after undo: %v", err)
	}
	p.send(`{"id":"m1","type":"get_messages"}`)
	if msgs, _ := json.Marshal(p.response("m1")["data"]); strings.Contains(string(msgs), "make a file") {
		t.Fatalf("the conversation after undo: %s", msgs)
	}
	p.send(`{"id":"r1","type":"redo"}`)
	if r := p.response("r1"); r["success"] != true {
		t.Fatalf("redo: %v", r)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made.txt")); err != nil || string(b) != "made" {
		t.Fatalf("made.txt after redo: %q %v", b, err)
	}
	p.send(`{"id":"r2","type":"redo"}`)
	if r := p.response("r2"); r["success"] != false || !strings.Contains(r["error"].(string), "no turn to undo") {
		t.Fatalf("a second redo: %v", r)
	}
}
