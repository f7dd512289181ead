package compaction

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

// The branch summary's prompt, and BranchSummaryPreamble, put before
// the model's text: the reference's words, so both programs' branch
// summaries read alike.
const (
	BranchSummaryPreamble = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"

	branchSummaryPrompt = `Create a structured summary of this conversation branch for context when returning later.

Use this EXACT format:

## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]

Keep each section concise. Preserve exact file paths, function names, and error messages.`
)

// DefaultBranchReserveTokens is what the branch summary leaves of the
// context window for the prompt and the answer (the reference's
// branchSummary.reserveTokens default).
const DefaultBranchReserveTokens = 16384

// BranchEntries are the entries a move of the leaf from oldLeaf to target
// leaves behind: from the deepest entry both paths share (Common, "" for
// none) down to oldLeaf, oldest first (the reference's
// collectEntriesForBranchSummary). Empty when oldLeaf is "" or lies on
// target's path.
func BranchEntries(s *session.Session, oldLeaf, target string) (entries []*session.Entry, common string) {
	if oldLeaf == "" {
		return nil, ""
	}
	onOld := map[string]bool{}
	for _, e := range s.BranchOf(oldLeaf) {
		onOld[e.ID] = true
	}
	path := s.BranchOf(target)
	for i := len(path) - 1; i >= 0; i-- {
		if onOld[path[i].ID] {
			common = path[i].ID
			break
		}
	}
	for id := oldLeaf; id != "" && id != common; {
		e := s.Entry(id)
		if e == nil {
			break
		}
		entries = append(entries, e)
		id = e.ParentID
	}
	for i, j := 0, len(entries)-1; i < j; i, j = i+1, j-1 {
		entries[i], entries[j] = entries[j], entries[i]
	}
	return entries, common
}

// branchMessage is what an entry of an abandoned branch shows the
// summary: messages but tool results (the calls say enough), custom
// messages, branch summaries, and a compaction's summary.
func branchMessage(e *session.Entry) (session.Message, bool) {
	switch e.Type {
	case session.TypeMessage:
		m, err := e.Message()
		if err != nil || m.Role == session.RoleToolResult {
			return session.Message{}, false
		}
		return *m, true
	case session.TypeCompaction:
		return session.Message{Role: session.RoleCompactionSummary, Summary: e.Summary, TokensBefore: e.TokensBefore, Timestamp: e.Time().UnixMilli()}, true
	}
	return e.ContextMessage()
}

// SummarizeBranch has the model summarize the abandoned branch entries
// (oldest first, from BranchEntries) in the reference's branch summary
// format: the newest messages that fit in budget tokens (0: no limit; a
// compaction or branch summary that does not fit is still taken while
// less than 90% of the budget is used), the preamble before the model's
// text, and the files the branch read and changed appended (with those of
// the earlier branch summaries pi wrote in it). instructions, when set,
// are an additional focus. A branch with nothing to summarize gives "No
// content to summarize" without a model call.
//
// # Errors
//
// The provider's error, or a response with no text.
func SummarizeBranch(ctx context.Context, p llm.Provider, entries []*session.Entry, instructions string, budget int) (string, *session.BranchSummaryDetails, error) {
	read, modified := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		if e.Type != session.TypeBranchSummary || e.FromHook || len(e.Details) == 0 {
			continue
		}
		var d session.BranchSummaryDetails
		if json.Unmarshal(e.Details, &d) == nil {
			for _, f := range d.ReadFiles {
				read[f] = true
			}
			for _, f := range d.ModifiedFiles {
				modified[f] = true
			}
		}
	}
	var msgs []session.Message
	total := 0
	for i := len(entries) - 1; i >= 0; i-- {
		m, ok := branchMessage(entries[i])
		if !ok {
			continue
		}
		fileOps(m, read, modified)
		n := session.EstimateTokens(m)
		if budget > 0 && total+n > budget {
			t := entries[i].Type
			if (t == session.TypeCompaction || t == session.TypeBranchSummary) && float64(total) < float64(budget)*0.9 {
				msgs = append(msgs, m)
			}
			break
		}
		msgs = append(msgs, m)
		total += n
	}
	if len(msgs) == 0 {
		return "No content to summarize", nil, nil
	}
	for i, j := 0, len(msgs)-1; i < j; i, j = i+1, j-1 {
		msgs[i], msgs[j] = msgs[j], msgs[i]
	}
	prompt := branchSummaryPrompt
	if instructions != "" {
		prompt += "\n\nAdditional focus: " + instructions
	}
	text, err := complete(ctx, p, "<conversation>\n"+SerializeConversation(msgs)+"\n</conversation>\n\n"+prompt)
	if err != nil {
		return "", nil, fmt.Errorf("summarize branch: %w", err)
	}
	// A file both read and changed is listed as changed.
	for f := range modified {
		delete(read, f)
	}
	d := &session.BranchSummaryDetails{ReadFiles: sortedKeys(read), ModifiedFiles: sortedKeys(modified)}
	return BranchSummaryPreamble + text + formatFiles(d.ReadFiles, d.ModifiedFiles), d, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
