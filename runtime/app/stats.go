package app

import (
	"fmt"
	"strings"

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

// SessionStats counts the messages, tool calls and tokens of the current
// branch's context.
func (r *Runtime) SessionStats() SessionStats {
	s := r.Session()
	st := SessionStats{SessionFile: r.sessionFile(), SessionID: s.ID()}
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
	if cs, err := r.cfg.CompactionSettings(); err == nil && cs.ContextWindow > 0 {
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

// Model describes the model of the agent NewAgent built last (a provider
// passed in AgentOptions is provider "custom"), else the one the settings
// resolve to.
//
// # Errors
//
// No agent was built and the settings resolve to no model (ResolveModel).
func (r *Runtime) Model() (ModelInfo, error) {
	r.mu.Lock()
	names, built := r.names, r.agent != nil || r.started
	r.mu.Unlock()
	info := ModelInfo{API: "openai-completions", Input: []string{"text"}}
	if cs, err := r.cfg.CompactionSettings(); err == nil {
		info.ContextWindow = cs.ContextWindow
	}
	s, err := ResolveModel(r.cfg, r.modelOptions())
	switch {
	case built && names.provider == "custom":
		info.ID, info.Provider = names.model, names.provider
	case err != nil:
		return ModelInfo{}, err
	default:
		info.ID, info.Provider, info.BaseURL = s.Name, providerName(s.BaseURL), s.BaseURL
		if s.Images {
			info.Input = append(info.Input, "image")
		}
	}
	info.Name = info.ID
	return info, nil
}

// SetModel makes agents built from now on (NewAgent) talk to the model
// named name on the same endpoint (RPC set_model, the TUI's /model); the
// session records the change with the next agent. provider, when not
// empty, must be the current endpoint's provider name (Model().Provider).
//
// # Errors
//
// A provider that is not the current one, an empty name, an agent built
// with a provider of its own (AgentOptions.Provider: a scripted model).
func (r *Runtime) SetModel(provider, name string) error {
	name = strings.TrimSpace(name)
	cur, err := r.Model()
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
	r.mu.Lock()
	r.opts.Model.Name = name
	r.mu.Unlock()
	return nil
}

// modelOptions are Options.Model as SetModel left them.
func (r *Runtime) modelOptions() ModelOptions {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opts.Model
}
