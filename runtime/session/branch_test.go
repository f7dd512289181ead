package session

import (
	"encoding/json"
	"errors"
	"os"
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

	if err := s.SetLeaf("nope"); !errors.Is(err, ErrNoEntry) {
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
	if _, err := s.ForkAt("zzz", CreateOptions{Cwd: "/work/proj", InMemory: true}); !errors.Is(err, ErrNoEntry) {
		t.Fatalf("ForkAt(unknown) = %v", err)
	}
	// An empty id: a new session with no entries, in memory here.
	e, err := s.ForkAt("", CreateOptions{Cwd: "/work/proj", InMemory: true})
	if err != nil || len(e.Entries()) != 0 || !e.InMemory() || e.Header().ParentSession != path {
		t.Fatalf("ForkAt(\"\") = %+v, %v", e, err)
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
