package session

import (
	"encoding/json"
	"fmt"
	"sort"
)

// TreeNode is one entry of the session's tree (Tree): the entry, its
// children (oldest first) and its label, as the reference's getTree
// returns them.
type TreeNode struct {
	Entry    *Entry
	Children []*TreeNode
	// Label is the entry's label after every label entry ("" for none);
	// LabelTimestamp is when it was set.
	Label, LabelTimestamp string
}

// Tree returns the session's entries as a tree: the roots (entries whose
// parent is null, themselves or missing) in file order, each entry's
// children sorted by timestamp, the oldest first, and the resolved labels.
func (s *Session) Tree() []*TreeNode {
	s.mu.Lock()
	entries := append([]*Entry(nil), s.entries...)
	s.mu.Unlock()
	labels := map[string]*Entry{}
	for _, l := range resolvedLabels(entries) {
		labels[l.TargetID] = l
	}
	nodes := make(map[string]*TreeNode, len(entries))
	for _, e := range entries {
		n := &TreeNode{Entry: e}
		if l := labels[e.ID]; l != nil {
			n.Label, n.LabelTimestamp = l.Label, l.Timestamp
		}
		nodes[e.ID] = n
	}
	var roots []*TreeNode
	for _, e := range entries {
		n := nodes[e.ID]
		parent := nodes[e.ParentID]
		if e.ParentID == "" || e.ParentID == e.ID || parent == nil {
			roots = append(roots, n)
			continue
		}
		parent.Children = append(parent.Children, n)
	}
	for _, n := range nodes {
		if len(n.Children) > 1 {
			sort.SliceStable(n.Children, func(i, j int) bool {
				return n.Children[i].Entry.Time().Before(n.Children[j].Entry.Time())
			})
		}
	}
	return roots
}

// Labels returns the label of every labelled entry (after every label
// entry of the file; an empty label clears one).
func (s *Session) Labels() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for _, l := range resolvedLabels(s.entries) {
		out[l.TargetID] = l.Label
	}
	return out
}

// MaxLabelLen bounds a label, in bytes.
const MaxLabelLen = 200

// AppendLabel sets the label of the entry targetID ("" clears it) with a
// label entry, a child of the leaf that becomes the leaf, as the
// reference's appendLabelChange. Label entries are not part of the
// context.
//
// # Errors
//
// ErrNoEntry for an unknown target; a label longer than MaxLabelLen or
// with a line break; otherwise as AppendMessage.
func (s *Session) AppendLabel(targetID, label string) (string, error) {
	if s.Entry(targetID) == nil {
		return "", fmt.Errorf("session label: %w", noEntry(targetID))
	}
	if len(label) > MaxLabelLen {
		return "", fmt.Errorf("session label: the label is %d bytes, more than the %d allowed", len(label), MaxLabelLen)
	}
	for _, r := range label {
		if r == '\n' || r == '\r' {
			return "", fmt.Errorf("session label: a label is one line")
		}
	}
	return s.append(&Entry{Type: TypeLabel, entryFields: &entryFields{TargetID: targetID, Label: label}})
}

// BranchSummaryDetails are the details of a branch summary pi writes: the
// files the abandoned branch read and changed (the reference's shape).
type BranchSummaryDetails = CompactionDetails

// AppendBranchSummary moves the leaf to the entry at ("" for before the
// first entry) and appends a branch_summary entry there that carries
// summary, the summary of the branch just left, into the context, as the
// reference's branchWithSummary (its fromId is at, or "root"). details
// may be nil.
//
// # Errors
//
// ErrNoEntry for an unknown at; an empty summary; otherwise as
// AppendMessage.
func (s *Session) AppendBranchSummary(at, summary string, details *BranchSummaryDetails) (string, error) {
	if summary == "" {
		return "", fmt.Errorf("session branch summary: the summary is empty")
	}
	if err := s.SetLeaf(at); err != nil {
		return "", fmt.Errorf("session branch summary: %w", err)
	}
	var raw json.RawMessage
	if details != nil {
		b, err := marshal(details)
		if err != nil {
			return "", fmt.Errorf("session branch summary: details: %w", err)
		}
		raw = b
	}
	from := at
	if from == "" {
		from = "root"
	}
	return s.append(&Entry{Type: TypeBranchSummary, entryFields: &entryFields{FromID: from, Summary: summary, Details: raw}})
}

// BranchOf returns the entries from the root to the entry id (all of
// them, of every type), without moving the leaf; nil for an unknown id.
func (s *Session) BranchOf(id string) []*Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[id]; !ok {
		return nil
	}
	return s.branchLocked(id)
}
