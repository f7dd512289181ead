package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openaitest "github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/compaction"
	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

// /compact on a conversation shorter than keep_recent_tokens compacts as
// the reference's does: nothing is summarized (the model gets an empty
// conversation), everything is kept from the first message on, and the
// entry records the context size. Right after, compacting again is
// refused in the reference's words; a later compaction updates the
// summary.
func TestManualCompactionOfAShortConversation(t *testing.T) {
	s := newSession(t)
	first := mustAppend(t, s, user("hello"))
	a := assistant("hi there")
	a.Usage = &session.Usage{Input: 10, Output: 5, TotalTokens: 15}
	mustAppend(t, s, a)
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "SUMMARY"}, openaitest.Reply{Text: "UPDATED"})
	c := compaction.New(s, provider(t, srv), compaction.DefaultSettings())
	ctx := context.Background()

	msgs, res, err := c.Compact(ctx, compaction.Manual, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstKeptEntryID != first || res.TokensBefore != 15 || res.Summary != "SUMMARY" {
		t.Fatalf("result %+v, want first kept %s, 15 tokens before", res, first)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	system, prompt := summaryRequest(t, reqs[0])
	if !strings.Contains(system, "summarize") || !strings.HasPrefix(prompt, "<conversation>\n\n</conversation>\n\n") || strings.Contains(prompt, "<previous-summary>") || !strings.Contains(prompt, "## Goal") {
		t.Fatalf("summarizing request: system %q, prompt %.200q", system, prompt)
	}
	entries := fileEntries(t, s.Path())
	last := entries[len(entries)-1]
	if last["type"] != "compaction" || last["firstKeptEntryId"] != first || last["tokensBefore"] != float64(15) || last["summary"] != "SUMMARY" {
		t.Fatalf("compaction entry in the file: %v", last)
	}
	if d, _ := json.Marshal(last["details"]); string(d) != `{"modifiedFiles":[],"readFiles":[]}` {
		t.Fatalf("details %s", d)
	}
	if len(msgs) != 3 || !strings.Contains(msgs[0].Content[0].Text, "<summary>\nSUMMARY") || msgs[1].Content[0].Text != "hello" || msgs[2].Content[0].Text != "hi there" {
		t.Fatalf("conversation after compaction: %+v", msgs)
	}

	_, _, err = c.Compact(ctx, compaction.Manual, "")
	if !errors.Is(err, compaction.ErrAlreadyCompacted) || err.Error() != "Already compacted" || len(srv.Requests()) != 1 {
		t.Fatalf("compacting twice: %v (%d requests)", err, len(srv.Requests()))
	}

	mustAppend(t, s, user("more"))
	mustAppend(t, s, assistant("sure"))
	if _, res, err = c.Compact(ctx, compaction.Manual, "the greetings"); err != nil {
		t.Fatal(err)
	}
	_, prompt = summaryRequest(t, srv.Requests()[1])
	if res.FirstKeptEntryID != first || !strings.HasPrefix(prompt, "<conversation>\n\n</conversation>\n\n<previous-summary>\nSUMMARY\n</previous-summary>") || !strings.HasSuffix(prompt, "Focus especially on: the greetings") {
		t.Fatalf("second compaction: first kept %s, prompt %q", res.FirstKeptEntryID, prompt)
	}
}

// A branch without conversation is refused in the reference's words and
// the model is not called.
func TestNothingToCompact(t *testing.T) {
	srv := openaitest.NewServer(t)
	s := newSession(t)
	c := compaction.New(s, provider(t, srv), compaction.DefaultSettings())
	_, _, err := c.Compact(context.Background(), compaction.Manual, "")
	if !errors.Is(err, compaction.ErrNothingToCompact) || err.Error() != "Nothing to compact (session too small)" {
		t.Fatalf("empty session: %v", err)
	}
	if _, err := s.AppendCustom("ext", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Compact(context.Background(), compaction.Threshold, ""); !errors.Is(err, compaction.ErrNothingToCompact) {
		t.Fatalf("a branch of a custom entry only: %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests", n)
	}
}

// pathOf appends msgs to a new session and returns its branch.
func pathOf(t *testing.T, msgs ...session.Message) []*session.Entry {
	s := newSession(t)
	for _, m := range msgs {
		mustAppend(t, s, m)
	}
	return s.Branch()
}

func withUsage(m session.Message, input, output, cacheRead int) session.Message {
	m.Usage = &session.Usage{Input: input, Output: output, CacheRead: cacheRead, TotalTokens: input + output + cacheRead}
	return m
}

// The cut-point cases of the reference's compaction tests
// (findCutPoint).
func TestFindCutPointReferenceCases(t *testing.T) {
	var msgs []session.Message
	for i := range 10 {
		msgs = append(msgs, user(numbered("User ", i)), withUsage(assistant(numbered("Assistant ", i)), 0, 100, (i+1)*1000))
	}
	path := pathOf(t, msgs...)
	cp := compaction.FindCutPoint(path, 0, len(path), 2500)
	if m, err := path[cp.FirstKept].Message(); err != nil || (m.Role != session.RoleUser && m.Role != session.RoleAssistant) {
		t.Fatalf("cut at %d: %v", cp.FirstKept, err)
	}
	// Keeping 4 tokens of "User 9" (2) and "Assistant 9" (3) cuts at User 9.
	if cp := compaction.FindCutPoint(path, 0, len(path), 4); cp.FirstKept != 18 || cp.SplitTurn || cp.TurnStart != -1 {
		t.Fatalf("cut %+v, want at entry 18 (User 9), not split", cp)
	}

	one := pathOf(t, assistant("a"))
	if cp := compaction.FindCutPoint(one, 0, len(one), 1000); cp.FirstKept != 0 {
		t.Fatalf("single assistant message: %+v", cp)
	}

	fits := pathOf(t, user("1"), withUsage(assistant("a"), 0, 50, 500), user("2"), withUsage(assistant("b"), 0, 50, 1000))
	if cp := compaction.FindCutPoint(fits, 0, len(fits), 50000); cp.FirstKept != 0 || cp.SplitTurn {
		t.Fatalf("everything fits: %+v", cp)
	}

	split := pathOf(t, user("Turn 1"), assistant("A1"), user("Turn 2"), assistant(strings.Repeat("x", 8000)), assistant(strings.Repeat("y", 8000)), assistant(strings.Repeat("z", 8000)))
	cp = compaction.FindCutPoint(split, 0, len(split), 3000)
	if cp.FirstKept != 4 || !cp.SplitTurn || cp.TurnStart != 2 {
		t.Fatalf("split turn: %+v, want first kept 4, turn start 2", cp)
	}
}

// A cut moves back over the non-message entries before it (a model
// change here), as the reference's does.
func TestCutMovesBackOverSettings(t *testing.T) {
	s := newSession(t)
	mustAppend(t, s, user("one"))
	mustAppend(t, s, assistant(strings.Repeat("a", 400)))
	mc, err := s.AppendModelChange("p", "other")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, user("two"))
	mustAppend(t, s, assistant("b"))
	path := s.Branch()
	cp := compaction.FindCutPoint(path, 0, len(path), 2)
	if path[cp.FirstKept].ID != mc {
		t.Fatalf("cut at %s (%s), want the model change", path[cp.FirstKept].ID, path[cp.FirstKept].Type)
	}
}

// The threshold and the context measure, with the reference's numbers.
func TestThreshold(t *testing.T) {
	on := compaction.Settings{Enabled: true, ContextWindow: 100000, ReserveTokens: 10000, KeepRecentTokens: 20000}
	if !on.ShouldCompact(95000) || on.ShouldCompact(89000) || on.ShouldCompact(90000) {
		t.Fatal("threshold is not context_window - reserve_tokens")
	}
	off := on
	off.Enabled = false
	if off.ShouldCompact(95000) {
		t.Fatal("disabled settings compact")
	}
	if n := compaction.ContextTokens(llm.Usage{InputTokens: 1000, OutputTokens: 500, TotalTokens: 1800}, nil); n != 1800 {
		t.Fatalf("total tokens: %d", n)
	}
	if n := compaction.ContextTokens(llm.Usage{InputTokens: 1000, OutputTokens: 500}, nil); n != 1500 {
		t.Fatalf("input + output: %d", n)
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: []content.Block{content.Text(strings.Repeat("é", 10))}}, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "read", Arguments: llm.RawArguments(`{"path": "a"}`)}}}}
	// 10 characters (not 20 bytes) → 3; "read" + `{"path":"a"}` = 16 → 4.
	if n := compaction.ContextTokens(llm.Usage{}, msgs); n != 7 {
		t.Fatalf("estimate without usage: %d, want 7", n)
	}
	if err := compaction.DefaultSettings().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (compaction.Settings{ContextWindow: 1000, ReserveTokens: 1000, KeepRecentTokens: 1}).Validate(); err == nil || !strings.Contains(err.Error(), "compaction.reserve_tokens (1000) must be smaller than model.context_window (1000)") {
		t.Fatalf("reserve = window: %v", err)
	}
}

// randomSession builds a session of turns: a user message, then assistant
// messages with 0-3 tool calls each followed by their results (sometimes
// with custom and model_change entries in between), with messages of
// random sizes.
func randomSession(t *testing.T, r *rand.Rand, turns int) *session.Session {
	t.Helper()
	s := newSession(t)
	text := func() string { return strings.Repeat("w", r.IntN(4000)) }
	n := 0
	for range turns {
		mustAppend(t, s, user(text()))
		for steps := r.IntN(4); steps >= 0; steps-- {
			var calls []session.Block
			for range r.IntN(4) {
				n++
				calls = append(calls, call(fmt.Sprintf("c%d", n), []string{"read", "edit", "bash"}[r.IntN(3)], fmt.Sprintf(`{"path":"f%d.go"}`, n)))
			}
			if steps == 0 {
				calls = nil
			}
			mustAppend(t, s, assistant(text(), calls...))
			for _, c := range calls {
				if r.IntN(5) == 0 {
					if _, err := s.AppendCustom("ext", json.RawMessage(`1`)); err != nil {
						t.Fatal(err)
					}
				}
				mustAppend(t, s, result(c.ID, c.Name, text()))
			}
			if r.IntN(6) == 0 {
				if _, err := s.AppendModelChange("p", fmt.Sprint(r.IntN(3))); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return s
}

// checkPairs fails unless every tool call in msgs is followed by exactly
// its results before the next assistant or user message, and every result
// answers a call of the assistant message before it.
func checkPairs(t *testing.T, msgs []llm.Message, where string) {
	t.Helper()
	open := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case llm.RoleAssistant, llm.RoleUser:
			if len(open) > 0 {
				t.Fatalf("%s: message %d (%s) comes while calls %v have no result", where, i, m.Role, open)
			}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case llm.RoleToolResult:
			if !open[m.ToolCallID] {
				t.Fatalf("%s: result %d answers %s, which is not an open call", where, i, m.ToolCallID)
			}
			if m.IsError && strings.HasPrefix(m.Content[0].Text, "No result provided") {
				t.Fatalf("%s: a result was synthesized: the cut separated a call from its result", where)
			}
			delete(open, m.ToolCallID)
		}
	}
	if len(open) > 0 {
		t.Fatalf("%s: calls %v have no result at the end", where, open)
	}
}

// Compaction never cuts between a tool call and its result, whatever the
// sizes and the keep_recent_tokens budget, and a second compaction on top
// of the first keeps that true; the kept part starts at the first kept
// entry, after the summary.
func TestCutPointsNeverSplitCallAndResult(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	summarized, split := 0, 0
	for trial := range 40 {
		s := randomSession(t, r, 2+r.IntN(6))
		for round := range 2 {
			path := s.Branch()
			keep := 1 + r.IntN(8000)
			prep, err := compaction.Prepare(path, keep)
			if err != nil {
				t.Fatalf("trial %d round %d: %v", trial, round, err)
			}
			if len(prep.ToSummarize)+len(prep.TurnPrefix) > 0 {
				summarized++
			}
			if prep.SplitTurn {
				split++
			}
			first := s.Entry(prep.FirstKeptEntryID)
			if m, err := first.Message(); err == nil && m.Role == session.RoleToolResult {
				t.Fatalf("trial %d: the cut is at a tool result", trial)
			}
			// Moved back over settings entries, the first message kept
			// must still not be a tool result.
			for i, e := range path {
				if e.ID != prep.FirstKeptEntryID {
					continue
				}
				for _, k := range path[i:] {
					if k.Type != session.TypeMessage {
						continue
					}
					if m, _ := k.Message(); m.Role == session.RoleToolResult {
						t.Fatalf("trial %d: the first message kept is a tool result", trial)
					}
					break
				}
				break
			}
			if _, err := s.AppendCompaction(session.CompactionResult{Summary: fmt.Sprintf("summary %d", round), FirstKeptEntryID: prep.FirstKeptEntryID, TokensBefore: prep.TokensBefore}); err != nil {
				t.Fatal(err)
			}
			msgs := session.ToLLM(s.Context())
			where := fmt.Sprintf("trial %d round %d keep %d", trial, round, keep)
			if !strings.Contains(msgs[0].Content[0].Text, fmt.Sprintf("summary %d", round)) {
				t.Fatalf("%s: the summary does not come first", where)
			}
			checkPairs(t, msgs, where)
			mustAppend(t, s, user("more"))
			mustAppend(t, s, assistant("", call(fmt.Sprintf("x%d%d", trial, round), "read", `{"path":"z"}`)))
			mustAppend(t, s, result(fmt.Sprintf("x%d%d", trial, round), "read", strings.Repeat("r", 3000)))
		}
	}
	if summarized < 40 || split == 0 || split == summarized {
		t.Fatalf("only %d compactions summarized something (%d split turns): the test proves too little", summarized, split)
	}
}

// A turn longer than keep_recent_tokens is split at an assistant message:
// the start of the turn is summarized apart; the files read and changed
// are listed; the previous summary is updated.
func TestPrepareSplitTurnAndSummarize(t *testing.T) {
	s := newSession(t)
	mustAppend(t, s, user("earlier"))
	mustAppend(t, s, assistant("earlier answer"))
	mustAppend(t, s, user("big task"))
	for i := range 6 {
		id := fmt.Sprintf("c%d", i)
		name := []string{"read", "edit", "write"}[i%3]
		mustAppend(t, s, assistant("", call(id, name, fmt.Sprintf(`{"path":"f%d"}`, i%4))))
		mustAppend(t, s, result(id, name, strings.Repeat("z", 4000)))
	}
	prep, err := compaction.Prepare(s.Branch(), 2500)
	if err != nil {
		t.Fatal(err)
	}
	if !prep.SplitTurn || len(prep.TurnPrefix) == 0 || len(prep.ToSummarize) != 2 {
		t.Fatalf("split %v, prefix %d, history %d", prep.SplitTurn, len(prep.TurnPrefix), len(prep.ToSummarize))
	}
	if len(prep.ModifiedFiles) == 0 || len(prep.ReadFiles)+len(prep.ModifiedFiles) > 4 {
		t.Fatalf("read %v, modified %v", prep.ReadFiles, prep.ModifiedFiles)
	}
	for _, f := range prep.ReadFiles {
		for _, m := range prep.ModifiedFiles {
			if f == m {
				t.Fatalf("%s listed as read and modified", f)
			}
		}
	}
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "HISTORY"}, openaitest.Reply{Text: "PREFIX"})
	res, err := compaction.Summarize(context.Background(), provider(t, srv), prep, "keep the error messages")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Summary, "HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX") || !strings.Contains(res.Summary, "<modified-files>\n") {
		t.Fatalf("summary %q", res.Summary)
	}
	_, history := summaryRequest(t, srv.Requests()[0])
	for _, want := range []string{"<conversation>\n[User]: earlier", "[Assistant]: earlier answer", "## Goal", "## Constraints & Preferences", "## Progress", "## Key Decisions", "## Next Steps", "## Critical Context", "keep the error messages"} {
		if !strings.Contains(history, want) {
			t.Errorf("summary prompt lacks %q", want)
		}
	}
	_, prefix := summaryRequest(t, srv.Requests()[1])
	if !strings.Contains(prefix, "[Tool result]: zzzz") || !strings.Contains(prefix, "more characters truncated]") || !strings.Contains(prefix, `[Assistant tool calls]: read(path="f0")`) {
		t.Errorf("turn prefix prompt: %.300q", prefix)
	}
	// A second compaction updates the first summary.
	if _, err := s.AppendCompaction(*res); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, user("next"))
	mustAppend(t, s, assistant(strings.Repeat("y", 20000)))
	prep2, err := compaction.Prepare(s.Branch(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if prep2.PreviousSummary != res.Summary {
		t.Fatal("the previous summary is not handed on")
	}
	srv.Add(openaitest.Reply{Text: "UPDATED"}, openaitest.Reply{Text: "PREFIX2"})
	if _, err := compaction.Summarize(context.Background(), provider(t, srv), prep2, ""); err != nil {
		t.Fatal(err)
	}
	if _, update := summaryRequest(t, srv.Requests()[2]); !strings.Contains(update, "<previous-summary>\nHISTORY") {
		t.Fatalf("update prompt %.200q", update)
	}
}

// A split turn with nothing new before it keeps the previous summary as
// the history part (the reference writes "No prior history." and loses
// it: a deliberate difference, docs/sessions.md).
func TestSplitTurnKeepsThePreviousSummary(t *testing.T) {
	s := newSession(t)
	u := mustAppend(t, s, user("task"))
	mustAppend(t, s, assistant("", call("c0", "read", `{"path":"a"}`)))
	mustAppend(t, s, result("c0", "read", "short"))
	if _, err := s.AppendCompaction(session.CompactionResult{Summary: "EARLIER", FirstKeptEntryID: u}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 4; i++ {
		id := fmt.Sprintf("c%d", i)
		mustAppend(t, s, assistant("", call(id, "read", `{"path":"b"}`)))
		mustAppend(t, s, result(id, "read", strings.Repeat("z", 4000)))
	}
	prep, err := compaction.Prepare(s.Branch(), 1500)
	if err != nil {
		t.Fatal(err)
	}
	if !prep.SplitTurn || len(prep.ToSummarize) != 0 || len(prep.TurnPrefix) == 0 {
		t.Fatalf("split %v, history %d, prefix %d", prep.SplitTurn, len(prep.ToSummarize), len(prep.TurnPrefix))
	}
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "PREFIX"})
	res, err := compaction.Summarize(context.Background(), provider(t, srv), prep, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Summary, "EARLIER\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX") || len(srv.Requests()) != 1 {
		t.Fatalf("summary %q after %d requests", res.Summary, len(srv.Requests()))
	}
}

// A file whose parent links loop or dangle still gives a branch that
// Prepare takes.
func TestPrepareOnBrokenParents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(`{"type":"session","version":3,"id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"aaaaaaaa","parentId":"cccccccc","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"a"}}
{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"b"}}
{"type":"message","id":"cccccccc","parentId":"bbbbbbbb","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"c"}}
{"type":"message","id":"dddddddd","parentId":"dddddddd","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"user","content":"d"}}
{"type":"message","id":"eeeeeeee","parentId":"missing!","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"user","content":"e"}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := session.Open(path, session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for _, leaf := range []string{"eeeeeeee", "cccccccc", "dddddddd"} {
		if err := o.SetLeaf(leaf); err != nil {
			t.Fatal(err)
		}
		prep, err := compaction.Prepare(o.Branch(), 1)
		if err != nil {
			t.Fatalf("leaf %s: %v", leaf, err)
		}
		if o.Entry(prep.FirstKeptEntryID) == nil {
			t.Fatalf("leaf %s: first kept %q is no entry", leaf, prep.FirstKeptEntryID)
		}
	}
}
