package session

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"unsafe"
)

// infoFile is a session of every kind of context entry: messages of every
// role (one read on encoding/json's path, one of a role pi does not know,
// one that cannot be read), failed and aborted answers with usage, a
// custom_message, a branch_summary, a compaction and an entry type pi
// does not know; and a second branch from the root.
const infoFile = `{"type":"session","version":3,"id":"019a0000-0000-7000-8000-000000000000","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"plain string, ünïcode 😀","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.go"}},{"type":"toolCall","id":"c2","name":"bash","arguments":{ "command" : "ls" }}],"api":"x","provider":"p","model":"m","usage":{"input":10,"output":5,"cacheRead":2,"cacheWrite":1,"totalTokens":0,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.3}},"stopReason":"toolUse","timestamp":2}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x\"y"},{"type":"image","data":"AAAA","mimeType":"image/png"}],"isError":false,"timestamp":3}}
{"type":"message","id":"a4","parentId":"a3","timestamp":"2025-01-01T00:00:04.000Z","message":{"r\u006fle":"toolResult","toolCallId":"c2","toolName":"bash","content":"slow path","timestamp":4}}
{"type":"future_thing","id":"a5","parentId":"a4","timestamp":"2025-01-01T00:00:05.000Z","whatever":[1,2]}
{"type":"message","id":"a6","parentId":"a5","timestamp":"2025-01-01T00:00:06.000Z","message":{"role":"assistant","content":[{"type":"text","text":"failed"}],"usage":{"input":1000,"output":1000,"totalTokens":2000},"stopReason":"error","timestamp":6}}
{"type":"message","id":"a7","parentId":"a6","timestamp":"2025-01-01T00:00:07.000Z","message":{"role":"user","content":5}}
{"type":"message","id":"a8","parentId":"a7","timestamp":"2025-01-01T00:00:08.000Z","message":{"role":"bashExecution","command":"make","output":"done","exitCode":2,"cancelled":false,"truncated":false,"timestamp":8}}
{"type":"custom_message","id":"a9","parentId":"a8","timestamp":"2025-01-01T00:00:09.000Z","customType":"note","content":[{"type":"text","text":"from an extension"}],"display":true}
{"type":"branch_summary","id":"b1","parentId":"a9","timestamp":"2025-01-01T00:00:10.000Z","fromId":"a2","summary":"a branch"}
{"type":"message","id":"b2","parentId":"b1","timestamp":"2025-01-01T00:00:11.000Z","message":{"role":"someday","content":"a role of a newer version","timestamp":11}}
{"type":"compaction","id":"b3","parentId":"b2","timestamp":"2025-01-01T00:00:12.000Z","summary":"SUMMARY","firstKeptEntryId":"a8","tokensBefore":500}
{"type":"message","id":"b4","parentId":"b3","timestamp":"2025-01-01T00:00:13.000Z","message":{"role":"assistant","content":[{"type":"text","text":"after"}],"usage":{"input":7,"output":3,"totalTokens":10},"stopReason":"aborted","timestamp":13}}
{"type":"message","id":"b5","parentId":"b4","timestamp":"2025-01-01T00:00:14.000Z","message":{"role":"user","content":[{"type":"text","text":"last"}],"timestamp":14}}
{"type":"message","id":"c1","parentId":null,"timestamp":"2025-01-01T00:00:15.000Z","message":{"role":"user","content":"another root","timestamp":15}}
`

// checkInfos holds ContextInfos, EstimateInfoTokens, SumUsage and
// TotalUsage to what the decoded messages give, for the path to each of
// the session's entries.
func checkInfos(t *testing.T, s *Session) {
	t.Helper()
	for _, leaf := range s.Entries() {
		s.mu.Lock()
		path := s.branchLocked(leaf.ID)
		s.mu.Unlock()
		msgs := BuildContext(path)
		infos := ContextInfos(path)
		if len(infos) != len(msgs) {
			t.Fatalf("to %s: %d infos for %d messages", leaf.ID, len(infos), len(msgs))
		}
		var want Usage
		for i := range msgs {
			w, g := InfoOf(&msgs[i]), infos[i]
			if (w.Usage == nil) != (g.Usage == nil) || (w.Usage != nil && *w.Usage != *g.Usage) {
				t.Fatalf("to %s, message %d: usage %+v, want %+v", leaf.ID, i, g.Usage, w.Usage)
			}
			w.Usage, g.Usage = nil, nil
			if w != g {
				t.Fatalf("to %s, message %d (%s): info %+v, want %+v", leaf.ID, i, msgs[i].Role, g, w)
			}
			if m := msgs[i]; m.Role == RoleAssistant && m.Usage != nil {
				want.Input += m.Usage.Input
				want.Output += m.Usage.Output
				want.CacheRead += m.Usage.CacheRead
				want.CacheWrite += m.Usage.CacheWrite
				want.TotalTokens += m.Usage.ContextTokens()
				want.Cost.Total += m.Usage.Cost.Total
				want.Cost.Input += m.Usage.Cost.Input
				want.Cost.Output += m.Usage.Cost.Output
			}
		}
		if g, w := EstimateInfoTokens(infos), EstimateContextTokens(msgs); g != w {
			t.Fatalf("to %s: %d tokens, want %d", leaf.ID, g, w)
		}
		if g := SumUsage(infos); g != want {
			t.Fatalf("to %s: usage %+v, want %+v", leaf.ID, g, want)
		}
	}
	var total float64
	for _, e := range s.Entries() {
		if m, err := e.Message(); err == nil && m.Role == RoleAssistant && m.Usage != nil {
			total += m.Usage.Cost.Total
		}
	}
	if g := s.TotalUsage(); g.Cost.Total != total || g.Input != 1017 {
		t.Fatalf("total usage %+v, want cost %v and 1017 input tokens", g, total)
	}
}

// An entry's info, kept from its first decode, is what its message gives,
// for every kind of entry, before and after the messages were decoded,
// for a session read from its file and for one built in this process.
func TestInfosMatchMessages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(infoFile), 0o600); err != nil {
		t.Fatal(err)
	}
	read := func() *Session {
		s, err := Read(path, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Run("infos first", func(t *testing.T) { checkInfos(t, read()) })
	t.Run("messages first", func(t *testing.T) {
		s := read()
		for _, e := range s.Entries() {
			e.Message()
		}
		checkInfos(t, s)
		checkInfos(t, s) // the kept infos, and the decodes that skip json.Valid
	})
	t.Run("the bad message", func(t *testing.T) {
		s := read()
		if _, ok := s.Entry("a7").Info(); ok {
			t.Fatal("a message that cannot be read has an info")
		}
		if _, err := s.Entry("a7").Message(); err == nil {
			t.Fatal("a message that cannot be read was read")
		}
		if i, ok := s.Entry("b2").Info(); !ok || i.Role != "someday" || i.Tokens != 0 {
			t.Fatalf("a newer version's role: %+v %v", i, ok)
		}
	})
	t.Run("built here", func(t *testing.T) {
		s, _ := newSession(t)
		u := assistant("ok", call("c", "read", `{"path":"x"}`))
		u.Usage = &Usage{Input: 1017, Output: 1, TotalTokens: 5}
		mustAppend(t, s, user("hello"))
		mustAppend(t, s, u)
		mustAppend(t, s, result("c", "read", "text"))
		if _, err := s.AppendCustomMessage("note", json.RawMessage(`"shown"`), true, nil); err != nil {
			t.Fatal(err)
		}
		checkInfos(t, s)
		if st := ContextInfos(s.Branch()); len(st) != 4 || st[1].ToolCalls != 1 || st[1].Tokens == 0 {
			t.Fatalf("infos %+v", st)
		}
	})
}

// Entries are read and their infos kept from several goroutines at once
// (the TUI's footer while a turn appends; -race checks it).
func TestInfosConcurrently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(infoFile), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Read(path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := EstimateContextTokens(s.Context())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got int
			switch g % 3 {
			case 0:
				got = EstimateInfoTokens(ContextInfos(s.Branch()))
			case 1:
				got = EstimateContextTokens(s.Context())
			default:
				s.TotalUsage()
				got = EstimateInfoTokens(ContextInfos(s.Branch()))
			}
			if got != want {
				errs <- fmt.Errorf("goroutine %d: %d tokens, want %d", g, got, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A message entry, most of a session, stays in the 128-byte size class:
// the other types' fields are apart, the decoded message is not kept.
func TestEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(Entry{}); n > 128 {
		t.Fatalf("an Entry is %d bytes, more than 128", n)
	}
}

// Branch, which copies the path it last walked (extended by appends),
// gives what a walk of the parents gives, through appends, new roots and
// leaves set anywhere.
func TestBranchKeptPath(t *testing.T) {
	s, _ := newSession(t)
	check := func(step string) {
		t.Helper()
		got := s.Branch()
		s.mu.Lock()
		want := s.walkLocked(s.leaf)
		s.mu.Unlock()
		if len(got) != len(want) {
			t.Fatalf("%s: branch of %d entries, a walk gives %d", step, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: entry %d is %s, a walk gives %s", step, i, got[i].ID, want[i].ID)
			}
		}
		if len(got) > 0 {
			got[0] = nil // a caller's copy: the session's path is not changed
		}
	}
	var ids []string
	for i := range 30 {
		switch {
		case i == 10:
			s.ResetLeaf()
			check("new root")
		case i%7 == 3:
			if err := s.SetLeaf(ids[i/2]); err != nil {
				t.Fatal(err)
			}
			check("leaf set back")
		case i%11 == 5:
			s.Entry(ids[i-1]) // an entry looked at: nothing changes
			check("looked at")
		}
		ids = append(ids, mustAppend(t, s, user(fmt.Sprint(i))))
		check(fmt.Sprint("append ", i))
	}
	if err := s.SetLeaf(""); err != nil {
		t.Fatal(err)
	}
	check("no leaf")
}

// FuzzUTF16Len holds UTF16Len to JavaScript's length: each rune one unit,
// two above U+FFFF, an invalid byte one (as U+FFFD), for strings and bytes.
func FuzzUTF16Len(f *testing.F) {
	for _, s := range []string{"", "plain ascii text, long enough for words", "ünïcode 😀 mixed in ascii text here", "\xff\xfe bad bytes \xf0\x9f", "😀😀😀😀😀😀😀😀😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := 0
		for _, r := range s {
			want++
			if r > 0xffff {
				want++
			}
		}
		if got := UTF16Len(s); got != want {
			t.Fatalf("UTF16Len(%q) = %d, want %d", s, got, want)
		}
		if got := UTF16Len([]byte(s)); got != want {
			t.Fatalf("UTF16Len([]byte(%q)) = %d, want %d", s, got, want)
		}
	})
}
