package main

import (
	"encoding/json"
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
