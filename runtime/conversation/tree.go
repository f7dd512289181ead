package conversation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/compaction"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

// This file holds the session as a tree: labels, and moving the leaf to
// any entry (the TUI's /tree, the RPC commands get_tree, navigate_tree and
// set_label), with a summary of the branch left behind when asked.

// SetLabel sets the label of the entry entryID ("" means the current
// leaf) to label, trimmed, the API key redacted; an empty label clears it
// (/label, RPC set_label). The label entry is written as the reference's
// and is not part of the context.
//
// # Errors
//
// An empty session (nothing to label); session.ErrNoEntry; a label longer
// than session.MaxLabelLen or of more than one line; a failed write.
func (c *Conversation) SetLabel(entryID, label string) error {
	s := c.Session()
	if entryID == "" {
		entryID = s.Leaf()
		if entryID == "" {
			return errors.New("label: the session has no entry yet")
		}
	}
	label = strings.TrimSpace(label)
	if _, err := s.AppendLabel(entryID, c.rt.Redactor().String(label)); err != nil {
		return fmt.Errorf("label: %w", err)
	}
	return nil
}

// Tree returns the session's entries as a tree (session.Session.Tree).
func (c *Conversation) Tree() []*session.TreeNode { return c.Session().Tree() }

// NavigateOptions say how NavigateTree leaves the current branch.
type NavigateOptions struct {
	// Summarize has the model summarize the branch left behind into a
	// branch_summary entry at the new position (as the reference's /tree
	// does when asked); without it nothing is written.
	Summarize bool
	// Instructions are an additional focus of the summary.
	Instructions string
	// Label, when set, labels the summary entry (or, without a summary,
	// the target).
	Label string
}

// NavigateResult is what NavigateTree did.
type NavigateResult struct {
	// EditorText is the text of the user or custom message chosen (whose
	// parent became the leaf), for a front end's editor; "" otherwise.
	EditorText string `json:"editorText,omitempty"`
	// Leaf is the new leaf ("" for before the first entry).
	Leaf string `json:"leaf"`
	// SummaryEntryID is the branch_summary entry written, if any.
	SummaryEntryID string `json:"summaryEntryId,omitempty"`
}

// NavigateTree moves the conversation to the entry targetID, as the
// reference's navigateTree: a user (or custom) message makes its parent
// the leaf and hands its text back for editing; any other entry becomes
// the leaf itself. With o.Summarize the model summarizes the branch left
// behind (from the common ancestor to the old leaf) and a branch_summary
// entry carries it into the new position's context. The next prompt goes
// on from there; the old branch stays in the file. Abort cancels the
// summary (nothing then moves).
//
// # Errors
//
// agent.ErrBusy while a run goes on; session.ErrNoEntry; the model cannot
// be resolved or fails (nothing then moves); a failed write.
func (c *Conversation) NavigateTree(ctx context.Context, targetID string, o NavigateOptions) (NavigateResult, error) {
	ctx, end, err := c.begin(ctx, "navigate tree")
	if err != nil {
		return NavigateResult{}, err
	}
	defer end()
	s := c.Session()
	old := s.Leaf()
	if targetID == old {
		return NavigateResult{Leaf: old}, nil
	}
	target := s.Entry(targetID)
	if target == nil {
		return NavigateResult{}, fmt.Errorf("navigate tree: entry %q: %w", targetID, session.ErrNoEntry)
	}
	res := NavigateResult{Leaf: targetID}
	switch {
	case userMessage(target) != nil:
		res.Leaf, res.EditorText = target.ParentID, blocksText(userMessage(target).Content)
	case target.Type == session.TypeCustomMessage:
		m, _ := target.ContextMessage()
		res.Leaf, res.EditorText = target.ParentID, blocksText(m.Content)
	}
	entries, _ := compaction.BranchEntries(s, old, targetID)
	before, err := c.sessionBefore(ctx, "navigate tree", app.HookSessionBeforeTree, app.SessionBeforeTreeParams{TargetID: targetID, OldLeafID: old, Summarize: o.Summarize})
	if err != nil {
		return NavigateResult{}, err
	}
	if o.Summarize && len(entries) > 0 && before.Summary != nil {
		id, err := s.AppendHookBranchSummary(res.Leaf, c.rt.Redactor().String(before.Summary.Summary), c.rt.Redactor().Bytes(before.Summary.Details))
		if err != nil {
			return NavigateResult{}, fmt.Errorf("navigate tree: %w", err)
		}
		res.SummaryEntryID = id
	} else if o.Summarize && len(entries) > 0 {
		p, err := c.provider()
		if err != nil {
			return NavigateResult{}, fmt.Errorf("navigate tree: summary: %w", err)
		}
		window := c.ContextWindow()
		if window <= 0 {
			window = 128000
		}
		summary, details, err := compaction.SummarizeBranch(ctx, p, entries, o.Instructions, max(window-compaction.DefaultBranchReserveTokens, 0))
		if err != nil {
			return NavigateResult{}, fmt.Errorf("navigate tree: %w", err)
		}
		id, err := s.AppendBranchSummary(res.Leaf, c.rt.Redactor().String(summary), details)
		if err != nil {
			return NavigateResult{}, fmt.Errorf("navigate tree: %w", err)
		}
		res.SummaryEntryID = id
	} else if err := s.SetLeaf(res.Leaf); err != nil {
		return NavigateResult{}, fmt.Errorf("navigate tree: %w", err)
	}
	if o.Label != "" {
		on := targetID
		if res.SummaryEntryID != "" {
			on = res.SummaryEntryID
		}
		if err := c.SetLabel(on, o.Label); err != nil {
			return NavigateResult{}, fmt.Errorf("navigate tree: %w", err)
		}
	}
	res.Leaf = s.Leaf()
	c.dropAgent()
	c.sessionEvent(ctx, app.EventSessionTree, app.SessionTreeEvent{Type: app.EventSessionTree, NewLeafID: res.Leaf, OldLeafID: old})
	return res, nil
}

// provider is the model's provider for a call of pi's own (a branch
// summary): Options.Provider, else the one of the model /model chose.
func (c *Conversation) provider() (llm.Provider, error) {
	if c.opts.Provider != nil {
		return c.opts.Provider, nil
	}
	c.mu.Lock()
	mo := c.model
	c.mu.Unlock()
	return c.rt.Provider(mo)
}
