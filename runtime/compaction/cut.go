package compaction

import "github.com/pi-go/pi/runtime/session"

// isCutPoint reports whether the kept conversation may start at e: a user,
// assistant, custom or bashExecution message (or a summary message), a
// custom_message or a branch_summary, never a tool result (which must
// follow its call).
func isCutPoint(e *session.Entry) bool {
	switch e.Type {
	case session.TypeBranchSummary, session.TypeCustomMessage:
		return true
	case session.TypeMessage:
		i, ok := e.Info()
		if !ok {
			return false
		}
		switch i.Role {
		case session.RoleUser, session.RoleAssistant, session.RoleCustom, session.RoleBashExecution, session.RoleBranchSummary, session.RoleCompactionSummary:
			return true
		}
	}
	return false
}

// startsTurn reports whether e starts a turn: a user or bashExecution
// message, a custom_message or a branch_summary.
func startsTurn(e *session.Entry) bool {
	switch e.Type {
	case session.TypeBranchSummary, session.TypeCustomMessage:
		return true
	case session.TypeMessage:
		i, ok := e.Info()
		return ok && (i.Role == session.RoleUser || i.Role == session.RoleBashExecution)
	}
	return false
}

// CutPoint is where compaction cuts a path.
type CutPoint struct {
	// FirstKept is the index of the first entry kept.
	FirstKept int
	// TurnStart is the index of the entry that starts the turn FirstKept
	// is in, when the cut splits a turn; -1 otherwise.
	TurnStart int
	// SplitTurn says the cut is inside a turn: FirstKept is not a user
	// message, and a turn starts at or before it.
	SplitTurn bool
}

// FindCutPoint chooses where to cut path[start:end] so that about
// keepRecent tokens stay, by the reference's rules (its findCutPoint):
// walking back from the newest message entry and adding up estimates
// (session.EstimateTokens) until keepRecent is reached, the cut is the
// first valid cut point (see isCutPoint) at or after that message — so a
// tool result always stays with its call; when the messages never reach
// keepRecent, the cut is the first valid cut point (everything is kept).
// The cut then moves back over non-message entries (settings, labels,
// custom entries) up to a message or a compaction. With no valid cut
// point the cut is at start.
//
// A cut at anything but a user message splits a turn when a turn start
// (see startsTurn) is found at or before it, back to start.
func FindCutPoint(path []*session.Entry, start, end, keepRecent int) CutPoint {
	var cuts []int
	for i := start; i < end; i++ {
		if isCutPoint(path[i]) {
			cuts = append(cuts, i)
		}
	}
	if len(cuts) == 0 {
		return CutPoint{FirstKept: start, TurnStart: -1}
	}
	cut := cuts[0]
	acc := 0
	for i := end - 1; i >= start; i-- {
		if path[i].Type != session.TypeMessage {
			continue
		}
		info, ok := path[i].Info()
		if !ok {
			continue
		}
		acc += info.Tokens
		if acc >= keepRecent {
			for _, c := range cuts {
				if c >= i {
					cut = c
					break
				}
			}
			break
		}
	}
	for cut > start {
		prev := path[cut-1]
		if prev.Type == session.TypeCompaction || prev.Type == session.TypeMessage {
			break
		}
		cut--
	}
	cp := CutPoint{FirstKept: cut, TurnStart: -1}
	if path[cut].Type == session.TypeMessage {
		if i, ok := path[cut].Info(); ok && i.Role == session.RoleUser {
			return cp
		}
	}
	for i := cut; i >= start; i-- {
		if startsTurn(path[i]) {
			cp.TurnStart = i
			cp.SplitTurn = true
			break
		}
	}
	return cp
}
