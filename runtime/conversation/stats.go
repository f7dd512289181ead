package conversation

import (
	"fmt"
	"strings"

	"github.com/pi-go/pi/runtime/app"

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
// measure). pi does not price models: Cost stays 0.
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
	if cs, err := c.rt.Config().CompactionSettings(); err == nil && cs.ContextWindow > 0 {
		tokens := session.EstimateContextTokens(msgs)
		st.ContextUsage = &ContextUsage{Tokens: tokens, ContextWindow: cs.ContextWindow, Percent: float64(tokens) * 100 / float64(cs.ContextWindow)}
	}
	return st
}

// ModelInfo describes the model the agents talk to, in the reference
// agent's Model shape (RPC get_state, set_model).
type ModelInfo struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	API           string    `json:"api"`
	Provider      string    `json:"provider"`
	BaseURL       string    `json:"baseUrl"`
	Reasoning     bool      `json:"reasoning"`
	Input         []string  `json:"input"`
	ContextWindow int       `json:"contextWindow"`
	MaxTokens     int       `json:"maxTokens"`
	Cost          ModelCost `json:"cost"`
}

// ModelCost is a model's price per million tokens (pi knows none: zeros).
type ModelCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Model describes the model the conversation talks to (a provider given
// in Options is provider "custom").
//
// # Errors
//
// No provider was given and the settings resolve to no model
// (app.ResolveModel).
func (c *Conversation) Model() (ModelInfo, error) {
	c.mu.Lock()
	mo := c.model
	c.mu.Unlock()
	info := ModelInfo{API: "openai-completions", Input: []string{"text"}}
	if cs, err := c.rt.Config().CompactionSettings(); err == nil {
		info.ContextWindow = cs.ContextWindow
	}
	if c.opts.Provider != nil {
		info.ID, info.Provider = firstNonEmpty(c.opts.ModelName, "custom"), "custom"
		info.Name = info.ID
		return info, nil
	}
	s, err := app.ResolveModel(c.rt.Config(), mo)
	if err != nil {
		return ModelInfo{}, err
	}
	info.ID, info.Provider, info.BaseURL = s.Name, providerName(s.BaseURL), s.BaseURL
	if s.Images {
		info.Input = append(info.Input, "image")
	}
	info.Name = info.ID
	return info, nil
}

// SetModel makes the conversation talk to the model named name on the same
// endpoint from the next prompt on (RPC set_model, /model); the session
// records the change then. provider, when not empty, must be the current
// endpoint's provider name (Model().Provider). What is queued stays.
//
// # Errors
//
// A run goes on (agent.ErrBusy); a provider that is not the current one,
// an empty name, a provider given in Options (a scripted model).
func (c *Conversation) SetModel(provider, name string) error {
	if err := c.idle("set model"); err != nil {
		return err
	}
	name = strings.TrimSpace(name)
	cur, err := c.Model()
	switch {
	case err != nil:
		return fmt.Errorf("set model: %w", err)
	case name == "":
		return fmt.Errorf("set model: no model name")
	case cur.Provider == "custom":
		return fmt.Errorf("set model: the model is %q, given by the front end (a scripted model), and cannot be changed", cur.ID)
	case provider != "" && provider != cur.Provider:
		return fmt.Errorf("set model: model not found: %s/%s (pi talks to one endpoint, provider %q; give that provider or none)", provider, name, cur.Provider)
	}
	c.mu.Lock()
	c.model.Name = name
	c.mu.Unlock()
	c.dropAgent()
	return nil
}
