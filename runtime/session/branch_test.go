package session

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A bashExecution message (the RPC bash command, the TUI's !cmd) is
// written in the reference's shape, read back, and reaches the model as
// the reference sends it.
func TestBashExecutionMessage(t *testing.T) {
	s, _ := newSession(t)
	path := s.Path()
	mustAppend(t, s, user("hi"))
	mustAppend(t, s, assistant("hello"))
	code := 2
	mustAppend(t, s, Message{Role: RoleBashExecution, Command: "ls nope", Output: "ls: nope: No such file", ExitCode: &code})
	lines := readLines(t, path)
	got := lines[len(lines)-1]["message"].(map[string]any)
	for k, want := range map[string]any{"role": "bashExecution", "command": "ls nope", "output": "ls: nope: No such file", "exitCode": 2.0, "cancelled": false, "truncated": false} {
		if !reflect.DeepEqual(got[k], want) {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	if _, ok := got["fullOutputPath"]; ok {
		t.Error("fullOutputPath written while empty")
	}
	s.Close()
	back, err := Open(path, OpenOptions{Cwd: "/work/proj"})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	ctx := back.Context()
	last := ctx[len(ctx)-1]
	if last.Role != RoleBashExecution || last.Command != "ls nope" || last.ExitCode == nil || *last.ExitCode != 2 {
		t.Fatalf("read back %+v", last)
	}
	msgs := ToLLM(ctx)
	if txt := msgs[len(msgs)-1].Content[0].Text; !strings.HasPrefix(txt, "Ran `ls nope`\n```\nls: nope") || !strings.HasSuffix(txt, "Command exited with code 2") {
		t.Fatalf("sent as %q", txt)
	}
	// Summaries and custom messages marshal for listings but are never
	// message entries.
	for _, m := range []Message{{Role: RoleCompactionSummary, Summary: "s", TokensBefore: 9}, {Role: RoleBranchSummary, Summary: "b", FromID: "x"}, {Role: RoleCustom, CustomType: "t"}} {
		if _, err := json.Marshal(&m); err != nil {
			t.Errorf("marshal %s: %v", m.Role, err)
		}
		if _, err := back.AppendMessage(m); err == nil {
			t.Errorf("%s appended as a message entry", m.Role)
		}
	}
}

// SetLeaf moves the branch back; ForkAt copies the path to an entry into a
// new session that names its parent, on disk or in memory.
func TestSetLeafAndForkAt(t *testing.T) {
	s, _ := newSession(t)
	path := s.Path()
	u1 := mustAppend(t, s, user("one"))
	a1 := mustAppend(t, s, assistant("first"))
	u2 := mustAppend(t, s, user("two"))
	mustAppend(t, s, assistant("second"))

	// The reference's wording, which its clients match.
	if err := s.SetLeaf("nope"); !errors.Is(err, ErrNoEntry) || !strings.Contains(err.Error(), "Entry nope not found") {
		t.Fatalf("SetLeaf(unknown) = %v", err)
	}
	if err := s.SetLeaf(a1); err != nil {
		t.Fatal(err)
	}
	u3 := mustAppend(t, s, user("other two"))
	if e := s.Entry(u3); e.ParentID != a1 {
		t.Fatalf("after SetLeaf the next entry's parent is %q, want %q", e.ParentID, a1)
	}
	var texts []string
	for _, m := range s.Context() {
		texts = append(texts, m.Content[0].Text)
	}
	if !reflect.DeepEqual(texts, []string{"one", "first", "other two"}) {
		t.Fatalf("context after SetLeaf %q", texts)
	}

	// Fork at the first answer: the path u1, a1; the new file names the
	// old one; the old session is unchanged.
	f, err := s.ForkAt(a1, CreateOptions{Cwd: "/work/proj", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Header().ParentSession != path || f.ID() == s.ID() {
		t.Fatalf("fork header %+v", f.Header())
	}
	if got := len(f.Branch()); got != 2 || f.Leaf() != a1 || f.Entry(u1) == nil || f.Entry(u2) != nil {
		t.Fatalf("fork has %d entries on its branch, leaf %q", got, f.Leaf())
	}
	mustAppend(t, f, user("forked"))
	lines := readLines(t, f.Path())
	if len(lines) != 4 || lines[0]["parentSession"] != path {
		t.Fatalf("fork file has %d lines: %v", len(lines), lines)
	}
	if len(s.Entries()) != 5 {
		t.Fatalf("the parent changed: %d entries", len(s.Entries()))
	}
	if _, err := s.ForkAt("zzz", CreateOptions{Cwd: "/work/proj", InMemory: true}); !errors.Is(err, ErrNoEntry) || !strings.Contains(err.Error(), "Entry zzz not found") {
		t.Fatalf("ForkAt(unknown) = %v", err)
	}
	// An empty id: a new session with no entries, in memory here.
	e, err := s.ForkAt("", CreateOptions{Cwd: "/work/proj", InMemory: true})
	if err != nil || len(e.Entries()) != 0 || !e.InMemory() || e.Header().ParentSession != path {
		t.Fatalf("ForkAt(\"\") = %+v, %v", e, err)
	}
}

// A fork of a session read from its file (the TUI's /fork, RPC fork and
// clone) copies the path as the reference's createBranchedSession does:
// every entry on it byte for byte (the session_info that names it, a
// model_change, a newer version's entry), the labels of its entries
// re-created after it (label entries themselves are not copied), and a
// header with a new id, this directory's cwd and parentSession naming the
// source.
func TestForkAtCopiesNameAndMetadata(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.jsonl")
	lines := []string{
		`{"type":"session","version":3,"id":"src-id","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/elsewhere"}`,
		`{"type":"message","id":"00000001","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`,
		`{"type":"model_change","id":"00000002","parentId":"00000001","timestamp":"2024-01-01T00:00:02.000Z","provider":"p","modelId":"m"}`,
		`{"type":"message","id":"00000003","parentId":"00000002","timestamp":"2024-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}`,
		`{"type":"session_info","id":"00000004","parentId":"00000003","timestamp":"2024-01-01T00:00:04.000Z","name":"Refactor auth"}`,
		`{"type":"label","id":"00000005","parentId":"00000004","timestamp":"2024-01-01T00:00:05.000Z","targetId":"00000001","label":"start"}`,
		`{"type":"future_kind","id":"00000006","parentId":"00000005","timestamp":"2024-01-01T00:00:06.000Z","x":[1]}`,
		`{"type":"label","id":"00000007","parentId":"00000006","timestamp":"2024-01-01T00:00:07.000Z","targetId":"00000003","label":"answer"}`,
		`{"type":"label","id":"00000008","parentId":"00000007","timestamp":"2024-01-01T00:00:08.000Z","targetId":"00000001","label":"beginning"}`,
	}
	if err := os.WriteFile(src, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(src, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, err := s.ForkAt(s.Leaf(), CreateOptions{Cwd: "/work/proj", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "Refactor auth" {
		t.Errorf("the copy's name is %q", f.Name())
	}
	f.Close()
	data, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var h Header
	if err := json.Unmarshal([]byte(got[0]), &h); err != nil || h.ID == "src-id" || h.Cwd != "/work/proj" || h.ParentSession != src || h.Version != Version {
		t.Fatalf("header %s (%v)", got[0], err)
	}
	// The path without its label entries, as the file has it.
	want := []string{lines[1], lines[2], lines[3], lines[4], lines[6]}
	if len(got) != 1+len(want)+2 {
		t.Fatalf("the copy has %d lines:\n%s", len(got), data)
	}
	for i, w := range want {
		if got[1+i] != w {
			t.Errorf("line %d:\n got %s\nwant %s", i+2, got[1+i], w)
		}
	}
	// The labels as resolved (the latest per target), in the reference's
	// order (a target keeps the place of its first label), each a child
	// of the one before, with the label's own time.
	parent := "00000006"
	for i, w := range []struct{ target, label, ts string }{{"00000001", "beginning", "2024-01-01T00:00:08.000Z"}, {"00000003", "answer", "2024-01-01T00:00:07.000Z"}} {
		var l struct {
			Type, ID, ParentID, Timestamp, TargetID, Label string
		}
		line := got[1+len(want)+i]
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l.Type != TypeLabel || !entryIDRe.MatchString(l.ID) || l.ParentID != parent || l.TargetID != w.target || l.Label != w.label || l.Timestamp != w.ts {
			t.Errorf("label line %s, want target %s label %s parent %s", line, w.target, w.label, parent)
		}
		if !strings.HasPrefix(line, `{"type":"label","id":`) {
			t.Errorf("label line %s not in the reference's field order", line)
		}
		parent = l.ID
	}
}

// TestForkInMemory: a session in memory keeps no lines for what it
// appends; forking it into a file writes every entry as a file session
// would have.
func TestForkInMemory(t *testing.T) {
	mem, err := Create(CreateOptions{Cwd: "/work/proj", InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, mem, user("one"))
	a := mustAppend(t, mem, assistant("", Block{Type: "toolCall", ID: "c1", Name: "write", Arguments: json.RawMessage(`{"path":"a","content":"<x> & y"}`)}))
	for _, e := range mem.Entries() {
		if e.line != nil {
			t.Fatalf("entry %s of a session in memory keeps its line", e.ID)
		}
	}
	f, err := mem.ForkAt(a, CreateOptions{Cwd: "/work/proj", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := readLines(t, f.Path())
	if len(lines) != 3 {
		t.Fatalf("fork file has %d lines: %v", len(lines), lines)
	}
	for i, e := range mem.Entries() {
		want, err := e.encode()
		if err != nil {
			t.Fatal(err)
		}
		var w map[string]any
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(lines[i+1], w) {
			t.Fatalf("line %d = %v, want %v", i+2, lines[i+1], w)
		}
	}
	data, _ := os.ReadFile(f.Path())
	if !strings.Contains(string(data), `"arguments":{"path":"a","content":"<x> & y"}`) {
		t.Fatalf("fork file lacks the call's arguments as written: %s", data)
	}
}

// ContextAt builds the context of the path to any entry without moving
// the leaf, as the reference's buildSessionContext(entries, leafId): an id
// the session does not have means the last entry in the file (even on
// another branch than the leaf's), "" means none; the model is the path's.
func TestContextAt(t *testing.T) {
	s, _ := newSession(t)
	u1 := mustAppend(t, s, user("one"))
	a1 := mustAppend(t, s, assistant("first"))
	if _, err := s.AppendModelChange("other", "big"); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, user("two"))
	if err := s.SetLeaf(u1); err != nil {
		t.Fatal(err)
	}
	last := mustAppend(t, s, user("two again"))
	if err := s.SetLeaf(a1); err != nil {
		t.Fatal(err)
	}
	texts := func(c BranchContext) string {
		var out []string
		for _, m := range c.Messages {
			out = append(out, m.Content[0].Text)
		}
		return strings.Join(out, ",") + " @" + c.Provider + "/" + c.Model
	}
	for id, want := range map[string]string{
		a1:        "one,first @p/m",
		last:      "one,two again @/",
		"unknown": "one,two again @/",
		"":        " @/",
	} {
		if got := texts(s.ContextAt(id)); got != want {
			t.Errorf("ContextAt(%q) = %s, want %s", id, got, want)
		}
	}
	u2 := s.Entries()[3].ID
	if got := texts(s.ContextAt(u2)); got != "one,first,two @other/big" {
		t.Errorf("ContextAt(the first branch) = %s", got)
	}
	if s.Leaf() != a1 {
		t.Fatalf("ContextAt moved the leaf to %q", s.Leaf())
	}
	if p, m := s.Model(); p != "p" || m != "m" {
		t.Fatalf("Model() = %s/%s", p, m)
	}
}
