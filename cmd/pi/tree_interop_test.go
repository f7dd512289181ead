package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/session"
)

// refTree is a session's tree, leaf and context as the reference's
// SessionManager reads them (testdata/refsession.mjs dump), or as pi
// does (piTree).
type refTree struct {
	Leaf  string `json:"leaf"`
	Nodes []struct {
		ID       string   `json:"id"`
		ParentID *string  `json:"parentId"`
		Type     string   `json:"type"`
		Label    string   `json:"label"`
		Children []string `json:"children"`
	} `json:"nodes"`
	Context []struct {
		Role string `json:"role"`
		Text string `json:"text"`
	} `json:"context"`
}

// refSession runs testdata/refsession.mjs with the reference's dist.
func refSession(t *testing.T, args ...string) string {
	t.Helper()
	cli := referenceAgent(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	script, _ := filepath.Abs(filepath.Join("testdata", "refsession.mjs"))
	cmd := exec.CommandContext(ctx, "node", append([]string{script, filepath.Dir(cli)}, args...)...)
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("refsession.mjs %v: %v\n%s", args, err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// piTree is what pi reads of the file, in refTree's shape.
func piTree(t *testing.T, file string) refTree {
	t.Helper()
	s, err := session.Read(file, session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Warnings(); len(w) > 0 {
		t.Fatalf("pi warned reading %s: %v", file, w)
	}
	var out refTree
	out.Leaf = s.Leaf()
	stack := append([]*session.TreeNode(nil), s.Tree()...)
	for i, j := 0, len(stack)-1; i < j; i, j = i+1, j-1 {
		stack[i], stack[j] = stack[j], stack[i]
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var parent *string
		if n.Entry.ParentID != "" {
			p := n.Entry.ParentID
			parent = &p
		}
		kids := []string{}
		for _, c := range n.Children {
			kids = append(kids, c.Entry.ID)
		}
		out.Nodes = append(out.Nodes, struct {
			ID       string   `json:"id"`
			ParentID *string  `json:"parentId"`
			Type     string   `json:"type"`
			Label    string   `json:"label"`
			Children []string `json:"children"`
		}{n.Entry.ID, parent, n.Entry.Type, n.Label, kids})
		for i := len(n.Children) - 1; i >= 0; i-- {
			stack = append(stack, n.Children[i])
		}
	}
	for _, m := range session.ToLLM(s.Context()) {
		var parts []string
		for _, b := range m.Content {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		out.Context = append(out.Context, struct {
			Role string `json:"role"`
			Text string `json:"text"`
		}{string(m.Role), strings.Join(parts, "\n")})
	}
	return out
}

func sameTree(t *testing.T, file string) refTree {
	t.Helper()
	var ref refTree
	if err := json.Unmarshal([]byte(refSession(t, "dump", file)), &ref); err != nil {
		t.Fatal(err)
	}
	pi := piTree(t, file)
	if !reflect.DeepEqual(pi, ref) {
		a, _ := json.MarshalIndent(pi, "", " ")
		b, _ := json.MarshalIndent(ref, "", " ")
		t.Fatalf("pi and the reference read %s differently\npi:\n%s\nreference:\n%s", file, a, b)
	}
	return pi
}

// A session pi wrote with labels (set, changed, cleared), two branches
// and a branch summary reads in the reference's SessionManager as the
// same tree, labels, leaf and context.
func TestInteropTreeWrittenByPi(t *testing.T) {
	referenceAgent(t)
	dir := t.TempDir()
	s, err := session.Create(session.CreateOptions{Cwd: dir, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	user := func(text string) string {
		id, err := s.AppendMessage(session.Message{Role: session.RoleUser, Content: []session.Block{{Type: "text", Text: text}}})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	answer := func(text string) string {
		id, err := s.AppendMessage(session.Message{Role: session.RoleAssistant, Content: []session.Block{{Type: "text", Text: text}}, API: "openai-completions", Provider: "loop", Model: "m1", StopReason: "stop"})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	label := func(id, l string) {
		if _, err := s.AppendLabel(id, l); err != nil {
			t.Fatal(err)
		}
	}
	user("hello")
	first := answer("first answer")
	label(first, "start")
	user("try approach A")
	a := answer("approach A answer")
	label(a, "A")
	label(a, "A2")
	sum, err := s.AppendBranchSummary(first, "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\nPI SUMMARY OF A", &session.BranchSummaryDetails{ReadFiles: []string{"a.go"}, ModifiedFiles: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	label(sum, "back")
	user("try approach B")
	answer("approach B answer")
	label(first, "")
	got := sameTree(t, s.Path())
	if n := len(got.Context); n != 5 || !strings.Contains(got.Context[2].Text, "PI SUMMARY OF A") {
		t.Fatalf("context %+v", got.Context)
	}
	labels := map[string]string{}
	for _, n := range got.Nodes {
		if n.Label != "" {
			labels[n.ID] = n.Label
		}
	}
	if !reflect.DeepEqual(labels, map[string]string{a: "A2", sum: "back"}) {
		t.Fatalf("labels %v", labels)
	}
}

// A session the reference's SessionManager wrote with labels, a branch
// and a branch summary reads in pi as the same tree and context, and
// pi's /tree view shows its branches, labels and summary.
func TestInteropTreeWrittenByReference(t *testing.T) {
	file := refSession(t, "write", t.TempDir())
	sameTree(t, file)
	s, err := session.Read(file, session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	text := conversation.FormatTree(conversation.TreeLines(s), 0)
	for _, want := range []string{"[start] assistant: first answer", "├─ ", "└─ ", "[back] [branch summary] REF SUMMARY OF A", "assistant: approach B answer  ← current"} {
		if !strings.Contains(text, want) {
			t.Fatalf("pi's tree lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "[A]") {
		t.Fatalf("a cleared label shows:\n%s", text)
	}
}
