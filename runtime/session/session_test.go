package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/llm"
)

var (
	entryIDRe = regexp.MustCompile(`^[0-9a-f]{8}$`)
	uuidV7Re  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	isoRe     = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
)

func user(text string) Message {
	return Message{Role: RoleUser, Content: []Block{{Type: "text", Text: text}}}
}

func assistant(text string, calls ...Block) Message {
	m := Message{Role: RoleAssistant, API: "openai-completions", Provider: "p", Model: "m", StopReason: "stop", Usage: &Usage{}}
	if text != "" {
		m.Content = append(m.Content, Block{Type: "text", Text: text})
	}
	if len(calls) > 0 {
		m.Content = append(m.Content, calls...)
		m.StopReason = "toolUse"
	}
	return m
}

func call(id, name, args string) Block {
	return Block{Type: "toolCall", ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func result(id, name, text string) Message {
	return Message{Role: RoleToolResult, ToolCallID: id, ToolName: name, Content: []Block{{Type: "text", Text: text}}}
}

func mustAppend(t testing.TB, s *Session, m Message) string {
	t.Helper()
	id, err := s.AppendMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func newSession(t testing.TB) (*Session, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := Create(CreateOptions{Cwd: "/work/proj", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func readLines(t testing.TB, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// The file appears with the first assistant message, in the reference's
// layout, and each later entry is one appended line: earlier bytes never
// change.
func TestFileLayoutAndAppendOnly(t *testing.T) {
	s, dir := newSession(t)
	mustAppend(t, s, user("hello"))
	if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file exists before the first assistant message: %v", err)
	}
	mustAppend(t, s, assistant("hi", call("call_1", "read", `{"path":"a.go","n":1}`)))
	if filepath.Dir(s.Path()) != dir {
		t.Fatalf("file %s not in %s", s.Path(), dir)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_` + s.ID() + `\.jsonl$`).MatchString(filepath.Base(s.Path())) {
		t.Fatalf("file name %s", filepath.Base(s.Path()))
	}
	if st, err := os.Stat(s.Path()); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v, %v", st.Mode(), err)
	}
	lines := readLines(t, s.Path())
	h := lines[0]
	if h["type"] != "session" || h["version"] != float64(3) || !uuidV7Re.MatchString(h["id"].(string)) ||
		!isoRe.MatchString(h["timestamp"].(string)) || h["cwd"] != "/work/proj" {
		t.Fatalf("header %v", h)
	}
	if _, has := h["parentSession"]; has {
		t.Fatalf("header has parentSession: %v", h)
	}
	if lines[1]["parentId"] != nil || lines[2]["parentId"] != lines[1]["id"] {
		t.Fatalf("parent chain: %v / %v", lines[1], lines[2])
	}
	for _, l := range lines[1:] {
		if !entryIDRe.MatchString(l["id"].(string)) || !isoRe.MatchString(l["timestamp"].(string)) || l["type"] != "message" {
			t.Fatalf("entry %v", l)
		}
	}
	am := lines[2]["message"].(map[string]any)
	tc := am["content"].([]any)[1].(map[string]any)
	if tc["type"] != "toolCall" || tc["id"] != "call_1" || tc["arguments"].(map[string]any)["path"] != "a.go" ||
		am["stopReason"] != "toolUse" || am["api"] != "openai-completions" || am["usage"] == nil {
		t.Fatalf("assistant message %v", am)
	}
	before, _ := os.ReadFile(s.Path())
	for i := range 5 {
		mustAppend(t, s, result("call_1", "read", strings.Repeat("x", i)))
		after, _ := os.ReadFile(s.Path())
		if !bytes.HasPrefix(after, before) {
			t.Fatal("an append changed earlier bytes")
		}
		added := after[len(before):]
		if bytes.Count(added, []byte("\n")) != 1 || !bytes.HasSuffix(added, []byte("\n")) {
			t.Fatalf("append %d wrote %q, not one line", i, added)
		}
		before = after
	}
}

// Reading tolerates a torn last line cut at any byte: every earlier line is
// kept, the torn one dropped with a warning, and appending after it starts
// on a fresh line that every reader finds.
func TestTornLastLine(t *testing.T) {
	s, _ := newSession(t)
	mustAppend(t, s, user("one"))
	mustAppend(t, s, assistant("two"))
	last := mustAppend(t, s, user("three"))
	s.Close()
	whole, _ := os.ReadFile(s.Path())
	extra, err := (&Entry{Type: TypeMessage, ID: "deadbeef", ParentID: last, Timestamp: isoTime(time.Now()), entryFields: noFields, msg: &Message{Role: RoleAssistant, Content: []Block{{Type: "text", Text: "four, with \"quotes\" and ünïcode"}}}}).encode()
	if err != nil {
		t.Fatal(err)
	}
	for cut := 1; cut < len(extra); cut++ {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		os.WriteFile(path, append(append([]byte{}, whole...), extra[:cut]...), 0o600)
		var warnings []string
		r, err := Read(path, OpenOptions{Warn: func(w string) { warnings = append(warnings, w) }})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if n := len(r.Entries()); n != 3 || r.Leaf() != last {
			t.Fatalf("cut %d: %d entries, leaf %s", cut, n, r.Leaf())
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "cut short") {
			t.Fatalf("cut %d: warnings %q", cut, warnings)
		}
		if cut%17 != 1 {
			continue // appending: a sample of the cuts is enough
		}
		o, err := Open(path, OpenOptions{})
		if err != nil {
			t.Fatalf("cut %d: open: %v", cut, err)
		}
		id := mustAppend(t, o, user("after the crash"))
		o.Close()
		r2, err := Read(path, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e := r2.Entry(id)
		if e == nil || e.ParentID != last || len(r2.Entries()) != 4 {
			t.Fatalf("cut %d: the entry after the torn line was not read back: %v", cut, e)
		}
		data, _ := os.ReadFile(path)
		if !bytes.Contains(data, extra[:cut]) {
			t.Fatalf("cut %d: the torn bytes were removed", cut)
		}
	}
	// A last line that is whole but lacks its newline is a real entry.
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, append(append([]byte{}, whole...), extra...), 0o600)
	o, err := Open(path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Leaf() != "deadbeef" {
		t.Fatalf("leaf %s", o.Leaf())
	}
	mustAppend(t, o, user("five"))
	o.Close()
	if n := len(readLines(t, path)); n != 6 {
		t.Fatalf("%d lines", n)
	}
}

// Malformed lines in the middle are skipped with a warning; unknown entry
// types are kept in the tree but add nothing to the context; a file that is
// not a session is refused.
func TestMalformedAndUnknownEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte(`{"type":"session","version":3,"id":"019a0000-0000-7000-8000-000000000000","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"plain string content","timestamp":1}}
{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa",BROKEN
{"type":"future_thing","id":"cccccccc","parentId":"aaaaaaaa","timestamp":"2025-01-01T00:00:02.000Z","whatever":[1,2]}
{"type":"label","id":"dddddddd","parentId":"cccccccc","timestamp":"2025-01-01T00:00:03.000Z","targetId":"aaaaaaaa","label":"x"}
{"type":"custom","customType":"ext","data":{"n":1},"id":"eeeeeeee","parentId":"dddddddd","timestamp":"2025-01-01T00:00:04.000Z"}
{"type":"message","id":"ffffffff","parentId":"eeeeeeee","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"}],"stopReason":"stop","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2}}}
`), 0o600)
	var warnings []string
	s, err := Read(path, OpenOptions{Warn: func(w string) { warnings = append(warnings, w) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "line 3") {
		t.Fatalf("warnings %q", warnings)
	}
	if len(s.Branch()) != 5 {
		t.Fatalf("branch %d entries", len(s.Branch()))
	}
	got := ToLLM(s.Context())
	// The thinking block travels with the message (each provider decides
	// what of it goes back).
	if len(got) != 2 || got[0].Content[0].Text != "plain string content" || len(got[1].Content) != 2 ||
		got[1].Content[0].Type != "thinking" || got[1].Content[0].Thinking != "hm" || got[1].Content[1].Text != "ok" {
		t.Fatalf("context %+v", got)
	}
	if _, err := s.AppendMessage(user("x")); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("append to a read-only session: %v", err)
	}
	for _, bad := range []string{"", "\n\n", "not json\n", `{"type":"message","id":"x"}` + "\n", `{"type":"session"}` + "\n"} {
		p := filepath.Join(t.TempDir(), "bad.jsonl")
		os.WriteFile(p, []byte(bad), 0o600)
		if _, err := Read(p, OpenOptions{}); !errors.Is(err, ErrNotSession) {
			t.Errorf("Read(%q) = %v, want ErrNotSession", bad, err)
		}
	}
	// Open refuses a file with content but no header instead of
	// overwriting it; an empty file is started afresh.
	p := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(p, []byte("precious text\n"), 0o600)
	if _, err := Open(p, OpenOptions{}); !errors.Is(err, ErrNotSession) {
		t.Fatalf("Open = %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "precious text\n" {
		t.Fatalf("the file was changed: %q", b)
	}
	// An empty file (white space only) gets its new header at once, as
	// in the reference: opened again, it is the same session.
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(empty, []byte("\n \n"), 0o600)
	e, err := Open(empty, OpenOptions{Cwd: "/here"})
	if err != nil {
		t.Fatal(err)
	}
	if lines := readLines(t, empty); len(lines) != 1 || lines[0]["type"] != "session" || lines[0]["id"] != e.ID() || lines[0]["cwd"] != "/here" {
		t.Fatalf("after Open the file holds %v", lines)
	}
	mustAppend(t, e, user("u"))
	mustAppend(t, e, assistant("a"))
	id := e.ID()
	e.Close()
	if lines := readLines(t, empty); len(lines) != 3 || lines[0]["cwd"] != "/here" {
		t.Fatalf("lines %v", lines)
	}
	again, err := Open(empty, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.ID() != id || len(again.Entries()) != 2 {
		t.Fatalf("reopened: id %q (want %q), %d entries", again.ID(), id, len(again.Entries()))
	}
}

// A caller may choose the session's id (the reference's
// newSession({id})): it is the header's and names the file. One that
// cannot name a file is refused, and nothing is created.
func TestCreateWithID(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(CreateOptions{Cwd: "/work/proj", Dir: dir, ID: "my-custom-id"})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "my-custom-id" || !strings.HasSuffix(s.Path(), "_my-custom-id.jsonl") || filepath.Dir(s.Path()) != dir {
		t.Fatalf("id %q, path %s", s.ID(), s.Path())
	}
	mustAppend(t, s, user("u"))
	mustAppend(t, s, assistant("a"))
	s.Close()
	if lines := readLines(t, s.Path()); lines[0]["id"] != "my-custom-id" {
		t.Fatalf("header %v", lines[0])
	}
	m, err := Create(CreateOptions{Cwd: "/work/proj", InMemory: true, ID: "header-test-id"})
	if err != nil || m.Header().ID != "header-test-id" {
		t.Fatalf("in memory: %+v, %v", m, err)
	}
	for _, bad := range []string{"../escape", `a\b`, ".", "..", "tab\there", "\xff", strings.Repeat("x", MaxSessionIDLen+1)} {
		_, err := Create(CreateOptions{Cwd: "/work/proj", Dir: dir, ID: bad})
		if err == nil || !strings.Contains(err.Error(), "create session: session id") {
			t.Errorf("Create(ID %q) = %v, want a refusal naming the id", bad, err)
		}
	}
	if err := CheckSessionID(strings.Repeat("x", MaxSessionIDLen)); err != nil {
		t.Errorf("the longest id: %v", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Fatalf("%d files in the folder, want 1", len(names))
	}
}

// A file whose first line is an entry, not a header, looks like a
// version 1 file to the migration (no version field): Open and Read refuse
// it before migrating, so its bytes stay as they were, and the error names
// the file and the line.
func TestOpenRefusesHeaderlessFileUnchanged(t *testing.T) {
	p := filepath.Join(t.TempDir(), "entries.jsonl")
	body := `{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n" +
		`{"type":"message","id":"a2","parentId":"a1","timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"again","timestamp":2}}` + "\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)
	for name, open := range map[string]func() error{
		"Open": func() error {
			s, err := Open(p, OpenOptions{})
			if s != nil {
				s.Close()
			}
			return err
		},
		"Read": func() error { _, err := Read(p, OpenOptions{}); return err },
	} {
		err := open()
		if !errors.Is(err, ErrNotSession) {
			t.Fatalf("%s = %v, want ErrNotSession", name, err)
		}
		if msg := err.Error(); !strings.Contains(msg, p) || !strings.Contains(msg, "line 1 is not a session header") {
			t.Errorf("%s error %q does not name the file and the line", name, msg)
		}
		if b, _ := os.ReadFile(p); string(b) != body {
			t.Fatalf("%s rewrote the file:\n%s", name, b)
		}
		if after, _ := os.Stat(p); !os.SameFile(before, after) {
			t.Fatalf("%s replaced the file", name)
		}
	}
}

// Messages read from a file are written back as the file holds them (RPC
// get_messages marshals them): a string content stays a string, a usage
// without totalTokens gets none, and fields pi does not know, of a
// message or of a content block, are kept.
func TestMessagesRoundTripAsTheFileHoldsThem(t *testing.T) {
	messages := []string{
		`{"role":"user","content":"plain <string> & content","timestamp":1700000000000}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig=="},{"type":"text","text":"ok","textSignature":"t1"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.go"},"partialJson":"{\"path\":\"a.go\"}"}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.3}},"stopReason":"toolUse","responseId":"r-1","timestamp":1700000000001}`,
		`{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"package a","futureField":[1,2]}],"isError":false,"timestamp":1700000000002}`,
		`{"role":"assistant","content":[{"type":"text","text":"done"}],"api":"openai-completions","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1700000000003}`,
	}
	var file strings.Builder
	file.WriteString(`{"type":"session","version":3,"id":"s1","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}` + "\n")
	parent := "null"
	for i, m := range messages {
		id := fmt.Sprintf("%08x", i+1)
		fmt.Fprintf(&file, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2024-01-01T00:00:0%d.000Z","message":%s}`+"\n", id, parent, i, m)
		parent = strconv.Quote(id)
	}
	file.WriteString(`{"type":"custom_message","customType":"note","content":"a string note","display":true,"id":"0000000a","parentId":` + parent + `,"timestamp":"2024-01-01T00:00:09.000Z"}` + "\n")
	want := append(messages, `{"role":"custom","customType":"note","content":"a string note","display":true,"timestamp":1704067209000}`)

	p := filepath.Join(t.TempDir(), "hand.jsonl")
	if err := os.WriteFile(p, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(p, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msgs := s.Context()
	if len(msgs) != len(want) {
		t.Fatalf("%d messages in the context, want %d", len(msgs), len(want))
	}
	for i := range msgs {
		got, err := json.Marshal(&msgs[i])
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(want[i]), &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("message %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
	// The fields pi reads are decoded all the same.
	if msgs[0].Content[0].Text != "plain <string> & content" || msgs[1].Usage.Output != 5 || msgs[1].Content[2].Name != "read" {
		t.Errorf("decoded fields: %+v", msgs[:2])
	}
	// A message pi builds is written in the reference's full shape.
	b, _ := json.Marshal(&Message{Role: RoleUser, Content: []Block{{Type: "text", Text: "x"}}, Timestamp: 5})
	if string(b) != `{"role":"user","content":[{"type":"text","text":"x"}],"timestamp":5}` {
		t.Errorf("a built message: %s", b)
	}
}

// Versions 1 and 2 are migrated as the reference does: ids and a linear
// parent chain, firstKeptEntryIndex → firstKeptEntryId, hookMessage →
// custom. Open rewrites the file once (atomically); Read never writes.
func TestMigration(t *testing.T) {
	v1 := `{"type":"session","id":"old-session","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"q1"}],"timestamp":1}}
{"type":"message","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"a1"}],"stopReason":"stop","timestamp":2}}
{"type":"message","timestamp":"2024-01-01T00:00:03.000Z","message":{"role":"user","content":[{"type":"text","text":"q2"}],"timestamp":3}}
{"type":"compaction","timestamp":"2024-01-01T00:00:04.000Z","summary":"S","firstKeptEntryIndex":3,"tokensBefore":10}
{"type":"message","timestamp":"2024-01-01T00:00:05.000Z","message":{"role":"hookMessage","customType":"h","content":"from a hook","display":true,"timestamp":5}}
`
	path := filepath.Join(t.TempDir(), "v1.jsonl")
	os.WriteFile(path, []byte(v1), 0o600)
	r, err := Read(path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != v1 {
		t.Fatal("Read wrote the file")
	}
	check := func(s *Session) {
		t.Helper()
		es := s.Entries()
		if len(es) != 5 {
			t.Fatalf("%d entries", len(es))
		}
		for i, e := range es {
			if !entryIDRe.MatchString(e.ID) || (i > 0 && e.ParentID != es[i-1].ID) || (i == 0 && e.ParentID != "") {
				t.Fatalf("entry %d: id %q parent %q", i, e.ID, e.ParentID)
			}
		}
		if es[3].FirstKeptEntryID != es[2].ID {
			t.Fatalf("firstKeptEntryId %q, want %q", es[3].FirstKeptEntryID, es[2].ID)
		}
		got := ToLLM(s.Context())
		var texts []string
		for _, m := range got {
			texts = append(texts, string(m.Role)+":"+m.Content[0].Text)
		}
		want := []string{"user:" + compactionSummaryPrefix + "S" + compactionSummarySuffix, "user:q2", "user:from a hook"}
		if strings.Join(texts, "|") != strings.Join(want, "|") {
			t.Fatalf("context\n got %q\nwant %q", texts, want)
		}
	}
	check(r)
	o, err := Open(path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check(o)
	mustAppend(t, o, user("q3"))
	o.Close()
	lines := readLines(t, path)
	if lines[0]["version"] != float64(3) || len(lines) != 7 {
		t.Fatalf("after migration: %v", lines[0])
	}
	if _, has := lines[4]["firstKeptEntryIndex"]; has {
		t.Fatal("firstKeptEntryIndex kept")
	}
	again, err := Read(path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Leaf() != again.Entries()[5].ID || again.Entries()[5].ParentID != again.Entries()[4].ID {
		t.Fatal("the appended entry does not follow the migrated ones")
	}
}

// Two writers never share a file: the second Open fails with ErrLocked,
// whose message suggests --fork; Fork of the locked session works; once
// the first closes, Open works again.
func TestLock(t *testing.T) {
	s, _ := newSession(t)
	mustAppend(t, s, user("u"))
	mustAppend(t, s, assistant("a"))
	_, err := Open(s.Path(), OpenOptions{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "--fork "+s.Path()) {
		t.Fatalf("second Open = %v", err)
	}
	f, err := Fork(s.Path(), CreateOptions{Cwd: "/elsewhere", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Header().ParentSession != s.Path() || f.ID() == s.ID() || len(f.Entries()) != 2 || f.Header().Cwd != "/elsewhere" {
		t.Fatalf("fork header %+v, %d entries", f.Header(), len(f.Entries()))
	}
	if _, err := Open(f.Path(), OpenOptions{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("the fork is not locked: %v", err)
	}
	mustAppend(t, f, user("in the fork"))
	if n := len(readLines(t, s.Path())); n != 3 {
		t.Fatalf("the source changed: %d lines", n)
	}
	// A new session at an explicit path that another process created
	// meanwhile is not appended to.
	p := filepath.Join(t.TempDir(), "x.jsonl")
	c1, _ := Create(CreateOptions{Cwd: "/p", Path: p})
	c2, _ := Create(CreateOptions{Cwd: "/p", Path: p})
	mustAppend(t, c1, assistant("first"))
	if _, err := c2.AppendMessage(assistant("second")); !errors.Is(err, ErrLocked) {
		t.Fatalf("second creator = %v", err)
	}
	c1.Close()
	s.Close()
	o, err := Open(s.Path(), OpenOptions{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	o.Close()
}

// The context is the path from the root to the leaf: with a compaction,
// its summary, the kept entries from firstKeptEntryId, then what follows;
// custom, label and model_change entries are not sent; a branch started by
// ResetLeaf does not see the old one.
func TestContextBuilding(t *testing.T) {
	s, _ := newSession(t)
	mustAppend(t, s, user("old question"))
	mustAppend(t, s, assistant("old answer"))
	kept := mustAppend(t, s, user("kept question"))
	mustAppend(t, s, assistant("", call("c1", "read", `{"path":"f"}`)))
	mustAppend(t, s, result("c1", "read", "file text"))
	if _, err := s.AppendCustom("ext", json.RawMessage(`{"secret":"not for the model"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendModelChange("p2", "m2"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendCompaction(CompactionResult{Summary: "SUM", FirstKeptEntryID: kept, TokensBefore: 99}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, user("after"))
	var got []string
	for _, m := range ToLLM(s.Context()) {
		line := string(m.Role) + ":"
		for _, b := range m.Content {
			line += b.Text
		}
		for _, c := range m.ToolCalls {
			line += c.Name + string(c.Arguments)
		}
		got = append(got, line)
	}
	want := []string{"user:" + compactionSummaryPrefix + "SUM" + compactionSummarySuffix, "user:kept question", `assistant:read{"path":"f"}`, "toolResult:file text", "user:after"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("context\n got %q\nwant %q", got, want)
	}
	if p, m := s.Model(); p != "p2" || m != "m2" {
		t.Fatalf("model %s/%s", p, m)
	}
	if _, err := s.AppendCompaction(CompactionResult{Summary: "x", FirstKeptEntryID: "nope"}); err == nil {
		t.Fatal("a compaction keeping an unknown entry was accepted")
	}
	s.ResetLeaf()
	mustAppend(t, s, user("fresh"))
	if ctx := ToLLM(s.Context()); len(ctx) != 1 || ctx[0].Content[0].Text != "fresh" {
		t.Fatalf("new branch context %+v", ctx)
	}
	if len(s.CustomEntries("")) != 0 {
		t.Fatal("the new branch sees the old branch's custom entries")
	}
}

// Every tool call sent to the model has a result: an unanswered call (the
// run was killed) gets an error result saying so, right after its
// message's other results; RepairInterrupted writes those results so both
// programs see them; failed and aborted assistant messages are not sent.
func TestInterruptedToolCalls(t *testing.T) {
	s, _ := newSession(t)
	mustAppend(t, s, user("go"))
	mustAppend(t, s, assistant("", call("a", "bash", `{"command":"x"}`), call("b", "read", `{"path":"y"}`)))
	mustAppend(t, s, result("a", "bash", "done"))
	msgs := ToLLM(s.Context())
	if len(msgs) != 4 || msgs[3].ToolCallID != "b" || !msgs[3].IsError || msgs[3].Content[0].Text != InterruptedResultText {
		t.Fatalf("context %+v", msgs)
	}
	if !strings.Contains(InterruptedResultText, "interrupted or killed") {
		t.Fatal("the synthesized result does not say what happened")
	}
	n, err := s.RepairInterrupted()
	if err != nil || n != 1 {
		t.Fatalf("repaired %d, %v", n, err)
	}
	if n, _ := s.RepairInterrupted(); n != 0 {
		t.Fatalf("repaired again: %d", n)
	}
	msgs2 := ToLLM(s.Context())
	if len(msgs2) != 4 || msgs2[3].Content[0].Text != InterruptedResultText {
		t.Fatalf("after repair %+v", msgs2)
	}
	// A later user message also settles calls left open in the middle.
	mid := []Message{user("1"), assistant("", call("x", "bash", `{}`)), user("2"),
		{Role: RoleAssistant, StopReason: "error", ErrorMessage: "boom", Content: []Block{{Type: "text", Text: "partial"}}},
		{Role: RoleAssistant, StopReason: "aborted"}, user("3")}
	got := ToLLM(mid)
	var roles []string
	for _, m := range got {
		roles = append(roles, string(m.Role))
	}
	if strings.Join(roles, ",") != "user,assistant,toolResult,user,user" {
		t.Fatalf("roles %v", roles)
	}
}

// Custom entries: extension state on the branch, within limits.
func TestCustomEntries(t *testing.T) {
	s, _ := newSession(t)
	for _, bad := range []struct{ typ, data string }{
		{"", `1`}, {"has space", `1`}, {"tab\t", `1`}, {strings.Repeat("x", MaxCustomTypeLen+1), `1`}, {"ünï", `1`},
		{"ok", `{"unterminated":`}, {"ok", `not json`}, {"ok", `"` + strings.Repeat("a", MaxCustomDataBytes) + `"`},
	} {
		if _, err := s.AppendCustom(bad.typ, json.RawMessage(bad.data)); !errors.Is(err, ErrBadCustom) {
			t.Errorf("AppendCustom(%q, %.20q) = %v", bad.typ, bad.data, err)
		}
	}
	mustAppend(t, s, user("u"))
	if _, err := s.AppendCustom("counter", json.RawMessage(`{ "n" : 1 }`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendCustom("other", nil); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, assistant("a"))
	if _, err := s.AppendCustom("counter", json.RawMessage(`{"n":2}`)); err != nil {
		t.Fatal(err)
	}
	defer func(old int) { customTotalLimit = old }(customTotalLimit)
	customTotalLimit = 4 * MaxCustomDataBytes
	big := json.RawMessage(`"` + strings.Repeat("b", MaxCustomDataBytes-10) + `"`)
	var refused error
	for i := 0; i < customTotalLimit/MaxCustomDataBytes+2 && refused == nil; i++ {
		_, refused = s.AppendCustom("flood", big)
	}
	if !errors.Is(refused, ErrBadCustom) || !strings.Contains(refused.Error(), "the most one run may append") {
		t.Fatalf("an extension could append custom data without end: %v", refused)
	}
	got := s.CustomEntries("counter")
	if len(got) != 2 || string(got[0].Data) != `{"n":1}` || string(got[1].Data) != `{"n":2}` {
		t.Fatalf("entries %+v", got)
	}
	if all := s.CustomEntries(""); len(all) < 3 || string(all[1].Data) != "null" {
		t.Fatalf("all %+v", all)
	}
	r, err := Read(s.Path(), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if back := r.CustomEntries("counter"); len(back) != 2 || string(back[1].Data) != `{"n":2}` {
		t.Fatalf("read back %+v", back)
	}
	if len(ToLLM(r.Context())) != 2 {
		t.Fatal("custom entries reached the context")
	}
}

func TestFromLLM(t *testing.T) {
	m := FromLLM(llm.Message{Role: llm.RoleAssistant, Content: []content.Block{content.Text("t")},
		ToolCalls: []llm.ToolCall{{ID: "1", Name: "a", Arguments: llm.RawArguments(`{"x": [1, 2]}`)}, {ID: "2", Name: "b", Arguments: llm.RawArguments(`not json`)}, {ID: "3", Name: "c", Arguments: llm.RawArguments(`[1]`)}}},
		AssistantMeta{API: "openai-completions", Provider: "p", Model: "m", Usage: llm.Usage{InputTokens: 5, OutputTokens: 2, TotalTokens: 7}, StopReason: llm.StopToolUse})
	b, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	want := `"content":[{"type":"text","text":"t"},{"type":"toolCall","id":"1","name":"a","arguments":{"x":[1,2]}},{"type":"toolCall","id":"2","name":"b","arguments":{}},{"type":"toolCall","id":"3","name":"c","arguments":{}}]`
	if !strings.Contains(string(b), want) || !strings.Contains(string(b), `"usage":{"input":5,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":7`) {
		t.Fatalf("got %s", b)
	}
	back := ToLLM([]Message{m})
	if string(back[0].ToolCalls[0].Arguments) != `{"x":[1,2]}` {
		t.Fatalf("arguments %q", back[0].ToolCalls[0].Arguments)
	}
	// No HTML escaping: the text is written as JSON.stringify writes it.
	r := FromLLM(llm.Message{Role: llm.RoleToolResult, ToolCallID: "1", ToolName: "bash", Content: []content.Block{content.Text("a && b <c>")}}, AssistantMeta{})
	if b, _ := marshal(&r); !strings.Contains(string(b), `"a && b <c>"`) {
		t.Fatalf("escaped: %s", b)
	}
}

func TestIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewSessionID()
		if !uuidV7Re.MatchString(id) || seen[id] {
			t.Fatalf("session id %q", id)
		}
		seen[id] = true
	}
	a, b := uuidV7(time.UnixMilli(1000)), uuidV7(time.UnixMilli(2000))
	if a[:13] >= b[:13] {
		t.Fatalf("ids do not sort by time: %s %s", a, b)
	}
	taken := map[string]bool{}
	for range 1000 {
		id := newEntryID(func(s string) bool { return taken[s] })
		if !entryIDRe.MatchString(id) || taken[id] {
			t.Fatalf("entry id %q", id)
		}
		taken[id] = true
	}
	if id := newEntryID(func(string) bool { return true }); !uuidV7Re.MatchString(id) {
		t.Fatalf("fallback id %q", id)
	}
}

func TestDirForListResolve(t *testing.T) {
	for cwd, want := range map[string]string{
		"/home/u/proj":   "--home-u-proj--",
		"/":              "----",
		`C:\Users\u\p`:   "--C--Users-u-p--",
		"/a:b/c":         "--a-b-c--",
		"relative/thing": "--relative-thing--",
	} {
		if got := filepath.Base(DirFor("/root", cwd)); got != want {
			t.Errorf("DirFor(%q) = %q, want %q", cwd, got, want)
		}
	}
	root := t.TempDir()
	dir := DirFor(root, "/p")
	var ids []string
	for i := range 3 {
		s, err := Create(CreateOptions{Cwd: "/p", Dir: dir, Now: time.Now().Add(time.Duration(i) * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, s, user("prompt number "+string(rune('A'+i))))
		mustAppend(t, s, assistant("a"))
		if i == 1 {
			s.AppendSessionInfo("  named  ")
		}
		s.Close()
		ids = append(ids, s.ID())
	}
	os.WriteFile(filepath.Join(dir, "junk.jsonl"), []byte("junk\n"), 0o600)
	infos, err := List(dir)
	if err != nil || len(infos) != 3 {
		t.Fatalf("List = %d, %v", len(infos), err)
	}
	for _, in := range infos {
		if in.MessageCount != 2 || in.Cwd != "/p" || !strings.HasPrefix(in.FirstMessage, "prompt number") {
			t.Fatalf("info %+v", in)
		}
		if in.ID == ids[1] && in.Name != "named" {
			t.Fatalf("name %q", in.Name)
		}
	}
	if p, err := Resolve(ids[2][:30], dir, root); err != nil || filepath.Base(p) == "" || !strings.Contains(p, ids[2]) {
		t.Fatalf("Resolve = %q, %v", p, err)
	}
	// The first 8 digits of ids made within a minute are the same
	// (they are the top of the millisecond timestamp).
	if _, err := Resolve(ids[0][:8], dir, root); !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("Resolve of a shared prefix = %v", err)
	}
	if p, err := Resolve(ids[1], "", root); err != nil || !strings.Contains(p, ids[1]) {
		t.Fatalf("Resolve through the root = %q, %v", p, err)
	}
	if _, err := Resolve("ffffffff", dir, root); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("Resolve unknown = %v", err)
	}
	if p, _ := Resolve("some/file.jsonl", dir, root); p != "some/file.jsonl" {
		t.Fatalf("a path is taken as is: %q", p)
	}
	if MostRecent(dir) == "" || MostRecent(filepath.Join(root, "none")) != "" {
		t.Fatal("MostRecent")
	}
}

// A crafted file whose parent links form a cycle, point to missing
// entries or to the entry itself still loads and builds a context.
func TestParentCycles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte(`{"type":"session","version":3,"id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"aaaaaaaa","parentId":"cccccccc","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"a"}}
{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"b"}}
{"type":"message","id":"cccccccc","parentId":"bbbbbbbb","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"c"}}
{"type":"message","id":"dddddddd","parentId":"dddddddd","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"user","content":"d"}}
{"type":"message","id":"eeeeeeee","parentId":"missing!","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"user","content":"e"}}
`), 0o600)
	o, err := Open(path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if got := ToLLM(o.Context()); len(got) != 1 || got[0].Content[0].Text != "e" {
		t.Fatalf("context %+v", got)
	}
	for _, leaf := range []string{"cccccccc", "dddddddd"} {
		o.mu.Lock()
		o.leaf = leaf
		o.mu.Unlock()
		if n := len(o.Branch()); n == 0 || n > 3 {
			t.Fatalf("branch from %s: %d entries", leaf, n)
		}
		BuildContext(o.Branch())
	}
}

func TestShortID(t *testing.T) {
	for _, c := range []struct {
		id     string
		others []string
		want   string
	}{
		{"01a24dce-1111", nil, "01a24dce"},
		{"01a24dce-1111", []string{"01a24dce-2222", "ffff"}, "01a24dce-1"},
		{"01a24dce-1111", []string{"01a24dce-1111"}, "01a24dce"},
		{"abc", []string{"abd"}, "abc"},
		{"01a24dce-1111", []string{"01a24dcf"}, "01a24dce"},
	} {
		if got := ShortID(c.id, c.others); got != c.want {
			t.Errorf("ShortID(%q, %q) = %q, want %q", c.id, c.others, got, c.want)
		}
	}
}

// Thinking blocks with their signatures (also redacted ones), Gemini's
// thought signature on a call, and the model that wrote the message go
// into the session in the reference's shape and come back to the loop
// unchanged.
func TestThinkingRoundTrip(t *testing.T) {
	in := llm.Message{
		Role: llm.RoleAssistant,
		Content: []content.Block{
			content.Thinking("let me see", "sig-abc"),
			{Type: "thinking", Thinking: "[Reasoning redacted]", Signature: "ENCRYPTED", Redacted: true},
			content.Text("done"),
		},
		ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read", Arguments: llm.RawArguments(`{"path":"a"}`), ThoughtSignature: "ts-1"}},
	}
	m := FromLLM(in, AssistantMeta{API: "anthropic-messages", Provider: "anthropic", Model: "claude-x", StopReason: llm.StopToolUse})
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"type":"thinking","thinking":"let me see","thinkingSignature":"sig-abc"}`,
		`{"type":"thinking","thinking":"[Reasoning redacted]","thinkingSignature":"ENCRYPTED","redacted":true}`,
		`{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"},"thoughtSignature":"ts-1"}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("session message lacks %s:\n%s", want, b)
		}
	}
	var back Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got := ToLLM([]Message{back, {Role: RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []Block{{Type: "text", Text: "x"}}}})[0]
	if got.API != "anthropic-messages" || got.Provider != "anthropic" || got.Model != "claude-x" {
		t.Errorf("provenance %q %q %q", got.API, got.Provider, got.Model)
	}
	if len(got.Content) != 3 || got.Content[0] != in.Content[0] || got.Content[1] != in.Content[1] || got.Content[2] != in.Content[2] {
		t.Errorf("content back %+v", got.Content)
	}
	if len(got.ToolCalls) != 1 || got.ToolCalls[0].ThoughtSignature != "ts-1" || string(got.ToolCalls[0].Arguments) != `{"path":"a"}` {
		t.Errorf("calls back %+v", got.ToolCalls)
	}
}
