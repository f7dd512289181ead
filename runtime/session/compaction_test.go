package session

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/llm"
)

// randomSession builds a session of turns: a user message, then assistant
// messages with 0-3 tool calls each followed by their results (sometimes
// with custom, label-like and model_change entries in between), with
// messages of random sizes.
func randomSession(t *testing.T, r *rand.Rand, turns int) *Session {
	t.Helper()
	s, _ := newSession(t)
	text := func() string { return strings.Repeat("w", r.IntN(4000)) }
	n := 0
	for range turns {
		mustAppend(t, s, user(text()))
		for steps := r.IntN(4); steps >= 0; steps-- {
			var calls []Block
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
	compacted, split := 0, 0
	for trial := range 40 {
		s := randomSession(t, r, 2+r.IntN(6))
		for round := range 2 {
			path := s.Branch()
			keep := 1 + r.IntN(8000)
			prep, err := Prepare(path, keep)
			if err != nil {
				continue // the whole conversation fits
			}
			compacted++
			if prep.SplitTurn {
				split++
			}
			first := s.Entry(prep.FirstKeptEntryID)
			if m, err := first.Message(); err == nil && m.Role == RoleToolResult {
				t.Fatalf("trial %d: the cut is at a tool result", trial)
			}
			// Moved back over settings entries, the first message kept
			// must still not be a tool result.
			for i, e := range path {
				if i > 0 && path[i-1].ID == prep.FirstKeptEntryID || e.ID == prep.FirstKeptEntryID {
					for _, k := range path[i:] {
						if k.Type != TypeMessage {
							continue
						}
						if m, _ := k.Message(); m.Role == RoleToolResult {
							t.Fatalf("trial %d: the first message kept is a tool result", trial)
						}
						break
					}
					break
				}
			}
			if _, err := s.AppendCompaction(CompactionResult{Summary: fmt.Sprintf("summary %d", round), FirstKeptEntryID: prep.FirstKeptEntryID, TokensBefore: prep.TokensBefore}); err != nil {
				t.Fatal(err)
			}
			msgs := ToLLM(s.Context())
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
	if compacted < 40 || split == 0 || split == compacted {
		t.Fatalf("only %d compactions (%d split turns): the test proves too little", compacted, split)
	}
}

// A turn longer than keep_recent_tokens is split at an assistant message:
// the start of the turn is summarized apart; the files read and changed
// are listed; the previous summary is updated.
func TestPrepareSplitTurnAndSummarize(t *testing.T) {
	s, _ := newSession(t)
	mustAppend(t, s, user("earlier"))
	mustAppend(t, s, assistant("earlier answer"))
	mustAppend(t, s, user("big task"))
	for i := range 6 {
		id := fmt.Sprintf("c%d", i)
		name := []string{"read", "edit", "write"}[i%3]
		mustAppend(t, s, assistant("", call(id, name, fmt.Sprintf(`{"path":"f%d"}`, i%4))))
		mustAppend(t, s, result(id, name, strings.Repeat("z", 4000)))
	}
	prep, err := Prepare(s.Branch(), 2500)
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
	p := &recorder{replies: []string{"HISTORY", "PREFIX"}}
	res, err := Summarize(context.Background(), p, prep, "keep the error messages")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Summary, "HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX") || !strings.Contains(res.Summary, "<modified-files>\n") {
		t.Fatalf("summary %q", res.Summary)
	}
	first := p.prompts[0]
	for _, want := range []string{"<conversation>\n[User]: earlier", "[Assistant]: earlier answer", "## Goal", "## Constraints & Preferences", "## Progress", "## Key Decisions", "## Next Steps", "## Critical Context", "keep the error messages"} {
		if !strings.Contains(first, want) {
			t.Errorf("summary prompt lacks %q", want)
		}
	}
	if !strings.Contains(p.prompts[1], "[Tool result]: zzzz") || !strings.Contains(p.prompts[1], "more characters truncated]") || !strings.Contains(p.prompts[1], `[Assistant tool calls]: read(path="f0")`) {
		t.Errorf("turn prefix prompt: %.300q", p.prompts[1])
	}
	// A second compaction updates the first summary.
	if _, err := s.AppendCompaction(*res); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, user("next"))
	mustAppend(t, s, assistant(strings.Repeat("y", 20000)))
	prep2, err := Prepare(s.Branch(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if prep2.PreviousSummary != res.Summary {
		t.Fatal("the previous summary is not handed on")
	}
	p2 := &recorder{replies: []string{"UPDATED", "PREFIX2"}}
	if _, err := Summarize(context.Background(), p2, prep2, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p2.prompts[0], "<previous-summary>\nHISTORY") {
		t.Fatalf("update prompt %.200q", p2.prompts[0])
	}
	// Nothing to compact right after a compaction.
	if _, err := s.AppendCompaction(CompactionResult{Summary: "s", FirstKeptEntryID: s.Leaf()}); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(s.Branch(), 100); err == nil {
		t.Fatal("compacting right after a compaction was allowed")
	}
}

// recorder is a provider that answers with fixed texts and records the
// prompts it got.
type recorder struct {
	replies []string
	prompts []string
}

func (r *recorder) Stream(_ context.Context, req llm.Request, _ func(llm.StreamEvent)) (*llm.Response, error) {
	if !strings.Contains(req.SystemPrompt, "summarize") || len(req.Tools) != 0 {
		return nil, fmt.Errorf("not a summarizing request: %q", req.SystemPrompt)
	}
	r.prompts = append(r.prompts, req.Messages[0].Content[0].Text)
	text := r.replies[0]
	r.replies = r.replies[1:]
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []content.Block{content.Text(text)}}, StopReason: llm.StopEnd}, nil
}
