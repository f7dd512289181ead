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
	msgs := s.Context()
	for _, m := range msgs {
		switch m.Role {
		case session.RoleUser:
			st.UserMessages++
		case session.RoleAssistant:
			st.AssistantMessages++
			for _, b := range m.Content {
				if b.Type == "toolCall" {
					st.ToolCalls++
				}
			}
			if u := m.Usage; u != nil {
				st.Tokens.Input += u.Input
				st.Tokens.Output += u.Output
				st.Tokens.CacheRead += u.CacheRead
				st.Tokens.CacheWrite += u.CacheWrite
				st.Tokens.Total += u.ContextTokens()
				st.Cost += u.Cost.Total
			}
		case session.RoleToolResult:
			st.ToolResults++
		}
	}
	st.TotalMessages = len(msgs)
	if cs, err := c.compactionSettings(); err == nil && cs.ContextWindow > 0 {
		tokens := session.EstimateContextTokens(msgs)
		st.ContextUsage = &ContextUsage{Tokens: tokens, ContextWindow: cs.ContextWindow, Percent: float64(tokens) * 100 / float64(cs.ContextWindow)}
	}
	return st
}
