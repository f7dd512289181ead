package compaction

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"

	"github.com/pi-go/pi/runtime/session"
)

// Preparation is what a compaction summarizes and keeps.
type Preparation struct {
	// FirstKeptEntryID is where the kept conversation starts.
	FirstKeptEntryID string
	// ToSummarize are the messages the summary replaces (from the previous
	// compaction's kept start, or the root, to the cut or the split turn);
	// empty when the whole conversation is kept.
	ToSummarize []session.Message
	// TurnPrefix is the start of a split turn, summarized apart.
	TurnPrefix []session.Message
	SplitTurn  bool
	// TokensBefore is the context size before compaction
	// (session.EstimateContextTokens of the whole context).
	TokensBefore int
	// PreviousSummary is the summary of the previous compaction, updated
	// rather than rewritten.
	PreviousSummary string
	// ReadFiles and ModifiedFiles are the files the summarized tool calls
	// read and changed, with the previous compaction's.
	ReadFiles, ModifiedFiles []string
}

// The reasons Prepare refuses, in the reference agent's words (its
// AgentSession.compact), which RPC clients see as they are.
var (
	// ErrNothingToCompact: the branch has no conversation yet.
	ErrNothingToCompact = errors.New("Nothing to compact (session too small)") //nolint:staticcheck // the reference's text
	// ErrAlreadyCompacted: the branch ends with a compaction.
	ErrAlreadyCompacted = errors.New("Already compacted") //nolint:staticcheck // the reference's text
)

// Prepare works out a compaction of path (root to leaf) by the reference's
// rules (its prepareCompaction): the span from the previous compaction's
// first kept entry (or the root) to the end is cut at FindCutPoint with
// keepRecent; what comes before the cut is summarized, with the previous
// summary. When the whole conversation fits in keepRecent nothing is
// summarized and everything is kept: the compaction still runs (the
// summary then says what the previous one said, or that there is no
// history), as the reference's does.
//
// # Errors
//
// ErrNothingToCompact when the branch's conversation is empty;
// ErrAlreadyCompacted when the path ends with a compaction.
func Prepare(path []*session.Entry, keepRecent int) (*Preparation, error) {
	if len(path) > 0 && path[len(path)-1].Type == session.TypeCompaction {
		return nil, ErrAlreadyCompacted
	}
	// The entries' infos for the sizes and the cut; only what is
	// summarized is decoded (below), once.
	conv := session.ContextInfos(path)
	if len(conv) == 0 {
		return nil, ErrNothingToCompact
	}
	prevIdx := -1
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == session.TypeCompaction {
			prevIdx = i
			break
		}
	}
	p := &Preparation{TokensBefore: session.EstimateInfoTokens(conv)}
	start := 0
	if prevIdx >= 0 {
		prev := path[prevIdx]
		p.PreviousSummary = prev.Summary
		start = prevIdx + 1
		if k := slices.IndexFunc(path, func(e *session.Entry) bool { return e.ID == prev.FirstKeptEntryID }); k >= 0 {
			start = k
		}
	}
	cut := FindCutPoint(path, start, len(path), keepRecent)
	p.FirstKeptEntryID = path[cut.FirstKept].ID
	p.SplitTurn = cut.SplitTurn
	historyEnd := cut.FirstKept
	if cut.SplitTurn {
		historyEnd = cut.TurnStart
	}
	p.ToSummarize = contextMessages(path[start:historyEnd])
	if cut.SplitTurn {
		p.TurnPrefix = contextMessages(path[cut.TurnStart:cut.FirstKept])
	}
	read, modified := map[string]bool{}, map[string]bool{}
	if prevIdx >= 0 && !path[prevIdx].FromHook && len(path[prevIdx].Details) > 0 {
		var d session.CompactionDetails
		if json.Unmarshal(path[prevIdx].Details, &d) == nil {
			for _, f := range d.ReadFiles {
				read[f] = true
			}
			for _, f := range d.ModifiedFiles {
				modified[f] = true
			}
		}
	}
	for _, m := range p.ToSummarize {
		fileOps(m, read, modified)
	}
	for _, m := range p.TurnPrefix {
		fileOps(m, read, modified)
	}
	for f := range read {
		if !modified[f] {
			p.ReadFiles = append(p.ReadFiles, f)
		}
	}
	for f := range modified {
		p.ModifiedFiles = append(p.ModifiedFiles, f)
	}
	sort.Strings(p.ReadFiles)
	sort.Strings(p.ModifiedFiles)
	return p, nil
}

// contextMessages is the ContextMessage of each of entries that has one
// (nil when none), each decoded once, into a slice of the right size.
func contextMessages(entries []*session.Entry) []session.Message {
	out := make([]session.Message, 0, len(entries))
	for _, e := range entries {
		if m, ok := e.ContextMessage(); ok {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// fileOps records the path argument of read, write and edit calls.
func fileOps(m session.Message, read, modified map[string]bool) {
	if m.Role != session.RoleAssistant {
		return
	}
	for _, b := range m.Content {
		if b.Type != "toolCall" {
			continue
		}
		var args struct {
			Path any `json:"path"`
		}
		if json.Unmarshal(b.Arguments, &args) != nil {
			continue
		}
		p, ok := args.Path.(string)
		if !ok || p == "" {
			continue
		}
		switch b.Name {
		case "read":
			read[p] = true
		case "write", "edit":
			modified[p] = true
		}
	}
}
