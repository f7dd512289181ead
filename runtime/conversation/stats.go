package conversation

import (
	"github.com/pi-go/pi/runtime/session"
)

// SessionStats are the numbers of the current branch, in the reference
// agent's shape (RPC get_session_stats; the TUI's status line).
type SessionStats struct {
	SessionFile       string        `json:"sessionFile,omitempty"`
	SessionID         string        `json:"sessionId"`
	UserMessages      int           `json:"userMessages"`
	AssistantMessages int           `json:"assistantMessages"`
	ToolCalls         int           `json:"toolCalls"`
	ToolResults       int           `json:"toolResults"`
	TotalMessages     int           `json:"totalMessages"`
	Tokens            TokenStats    `json:"tokens"`
	Cost              float64       `json:"cost"`
	ContextUsage      *ContextUsage `json:"contextUsage,omitempty"`
}

// TokenStats sums the usage of the assistant messages.
type TokenStats struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	Total      int `json:"total"`
}

// ContextUsage is how full the context window is: the last response's
// usage plus an estimate of what came after it (the compaction threshold's
// measure).
type ContextUsage struct {
	Tokens        int     `json:"tokens"`
	ContextWindow int     `json:"contextWindow"`
	Percent       float64 `json:"percent"`
}

// Stats counts the messages, tool calls and tokens of the current
// branch's context.
func (c *Conversation) Stats() SessionStats {
	s := c.Session()
	st := SessionStats{SessionFile: c.sessionFile(), SessionID: s.ID()}
	// The entries' infos, not the messages: a long session is not
	// decoded again for every status line.
	infos := session.ContextInfos(s.Branch())
	for _, i := range infos {
		switch i.Role {
		case session.RoleUser:
			st.UserMessages++
		case session.RoleAssistant:
			st.AssistantMessages++
			st.ToolCalls += i.ToolCalls
		case session.RoleToolResult:
			st.ToolResults++
		}
	}
	u := session.SumUsage(infos)
	st.Tokens = TokenStats{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Total: u.TotalTokens}
	st.Cost = u.Cost.Total
	st.TotalMessages = len(infos)
	if cs, err := c.compactionSettings(); err == nil && cs.ContextWindow > 0 {
		tokens := session.EstimateInfoTokens(infos)
		st.ContextUsage = &ContextUsage{Tokens: tokens, ContextWindow: cs.ContextWindow, Percent: float64(tokens) * 100 / float64(cs.ContextWindow)}
	}
	return st
}
