package conversation

import (
	"fmt"
	"strings"

	"github.com/pi-go/pi/runtime/compaction"
	"github.com/pi-go/pi/runtime/session"
)

// TreeLine is one entry of a session's tree as front ends show it
// (TreeLines): the /tree picker, /tree's text and pi sessions show.
type TreeLine struct {
	// EntryID is the entry the line shows.
	EntryID string `json:"entryId"`
	// Prefix draws the branches before the text ("│  ├─ "…).
	Prefix string `json:"prefix"`
	// Kind is user, assistant, tool, compaction, branch_summary, model,
	// custom or other.
	Kind string `json:"kind"`
	// Text says what the entry is, on one line (not cut).
	Text string `json:"text"`
	// Label is the entry's label, if any.
	Label string `json:"label,omitempty"`
	// Current marks the leaf; OnPath the entries from the root to it.
	Current bool `json:"current,omitempty"`
	OnPath  bool `json:"onPath,omitempty"`
}

// hiddenInTree are the entries the tree does not show a line for (their
// children are shown in their place): labels, which show on the entry
// they label, the session name, and pi's marks of where the conversation
// went back to (undo, a dropped prompt).
func hiddenInTree(e *session.Entry) bool {
	switch e.Type {
	case session.TypeLabel, session.TypeSessionInfo:
		return true
	case session.TypeCustom:
		return e.CustomType == UndoType || e.CustomType == DroppedPromptType
	}
	return false
}

// TreeLines returns the session's tree, one line per entry in the order
// a person reads it: an entry's children after it, a chain without
// branches at one depth, each branch of a fork indented under ├─ and └─.
// Label, session_info and pi's own undo and dropped-prompt entries have
// no line of their own.
func TreeLines(s *session.Session) []TreeLine {
	leaf := s.Leaf()
	onPath := map[string]bool{}
	for _, e := range s.Branch() {
		onPath[e.ID] = true
	}
	// visible lists the children shown for a node: hidden ones are
	// replaced by their own visible children.
	var visible func(ns []*session.TreeNode) []*session.TreeNode
	visible = func(ns []*session.TreeNode) []*session.TreeNode {
		var out []*session.TreeNode
		for len(ns) > 0 {
			n := ns[0]
			ns = ns[1:]
			if hiddenInTree(n.Entry) {
				ns = append(append([]*session.TreeNode(nil), n.Children...), ns...)
				continue
			}
			out = append(out, n)
		}
		return out
	}
	// The leaf may be a hidden entry (a label just set): mark the
	// nearest shown entry above it.
	current := leaf
	for current != "" {
		e := s.Entry(current)
		if e == nil || !hiddenInTree(e) {
			break
		}
		current = e.ParentID
	}
	type item struct {
		n      *session.TreeNode
		indent string // the prefix of the lines under this one
		head   string // the connector of this line
	}
	var out []TreeLine
	roots := visible(s.Tree())
	var stack []item
	push := func(ns []*session.TreeNode, indent string, fork bool) {
		for i := len(ns) - 1; i >= 0; i-- {
			head, sub := "", indent
			if fork {
				if i == len(ns)-1 {
					head, sub = indent+"└─ ", indent+"   "
				} else {
					head, sub = indent+"├─ ", indent+"│  "
				}
			} else {
				head = indent
			}
			stack = append(stack, item{ns[i], sub, head})
		}
	}
	push(roots, "", len(roots) > 1)
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e := it.n.Entry
		kind, text := describeEntry(e)
		out = append(out, TreeLine{EntryID: e.ID, Prefix: it.head, Kind: kind, Text: text, Label: it.n.Label, Current: e.ID == current, OnPath: onPath[e.ID]})
		kids := visible(it.n.Children)
		push(kids, it.indent, len(kids) > 1)
	}
	return out
}

// describeEntry is an entry's kind and one line about it.
func describeEntry(e *session.Entry) (kind, text string) {
	switch e.Type {
	case session.TypeMessage:
		m, err := e.Message()
		if err != nil {
			return "other", "(a message pi cannot read)"
		}
		switch m.Role {
		case session.RoleUser:
			return "user", "user: " + oneLine(blocksText(m.Content))
		case session.RoleAssistant:
			t := oneLine(blocksText(m.Content))
			var calls []string
			for _, b := range m.Content {
				if b.Type == "toolCall" {
					calls = append(calls, b.Name)
				}
			}
			if len(calls) > 0 {
				if t != "" {
					t += " "
				}
				t += "[calls " + strings.Join(calls, ", ") + "]"
			}
			if t == "" && m.StopReason == "error" {
				t = "(error) " + oneLine(m.ErrorMessage)
			}
			return "assistant", "assistant: " + t
		case session.RoleToolResult:
			state := "result"
			if m.IsError {
				state = "error"
			}
			return "tool", fmt.Sprintf("%s %s: %s", m.ToolName, state, oneLine(session.JoinTexts(m.Content, " ")))
		case session.RoleBashExecution:
			return "user", "!" + oneLine(m.Command)
		}
		return "other", m.Role
	case session.TypeCompaction:
		return "compaction", fmt.Sprintf("[compaction: %s tokens summarized]", HumanTokens(e.TokensBefore))
	case session.TypeBranchSummary:
		return "branch_summary", "[branch summary] " + oneLine(strings.TrimPrefix(e.Summary, compaction.BranchSummaryPreamble))
	case session.TypeModelChange:
		return "model", "[model " + e.Provider + "/" + e.ModelID + "]"
	case session.TypeThinkingLevelChange:
		return "model", "[thinking " + e.ThinkingLevel + "]"
	case session.TypeCustomMessage:
		m, _ := e.ContextMessage()
		return "custom", "[" + e.CustomType + "] " + oneLine(blocksText(m.Content))
	case session.TypeCustom:
		return "custom", "[" + e.CustomType + "]"
	}
	return "other", "[" + e.Type + "]"
}

// FormatTree writes TreeLines as text, each line cut to width bytes (0:
// not cut), the leaf marked "← current", labels in brackets.
func FormatTree(lines []TreeLine, width int) string {
	var b strings.Builder
	for _, l := range lines {
		t := l.Prefix + l.EntryID + " "
		if l.Label != "" {
			t += "[" + l.Label + "] "
		}
		t += l.Text
		if width > 0 {
			t = cut(t, width)
		}
		if l.Current {
			t += "  ← current"
		}
		b.WriteString(t + "\n")
	}
	return b.String()
}
