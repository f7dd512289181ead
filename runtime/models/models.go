// Package models owns what pi knows of models: the built-in catalogue of
// well-known providers and models (catalogue.json, embedded; the facts of
// the reference agent's catalogue), the user's models file
// ($PI_HOME/models.json, the reference agent's format), their merge, the
// API key of a provider, the thinking levels a model has and what a
// response cost. It talks to no model: runtime/llm does. Imports of pi's
// packages: runtime/llm only (the thinking levels, usage and cost types).
package models

import (
	"os"
	"slices"
	"strings"

	"github.com/pi-go/pi/runtime/llm"
)

// The wire APIs by the reference's names; runtime/llm owns them (its
// NewProvider builds each).
const (
	APIOpenAICompletions  = llm.APIOpenAICompletions
	APIOpenAIResponses    = llm.APIOpenAIResponses
	APIAnthropicMessages  = llm.APIAnthropicMessages
	APIGoogleGenerativeAI = llm.APIGoogleGenerative
)

// Defaults of a models-file model that leaves a field out (the
// reference's).
const (
	DefaultContextWindow = 128000
	DefaultMaxTokens     = 16384
)

// Cost is a model's price in US dollars per million tokens.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Model is one model of one provider, in the reference's Model shape (RPC
// model objects are this JSON).
type Model struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	API      string `json:"api"`
	Provider string `json:"provider"`
	BaseURL  string `json:"baseUrl"`
	// Reasoning says the model can think (takes a thinking level).
	Reasoning bool `json:"reasoning"`
	// ThinkingLevelMap maps a level to the provider's value; a level
	// mapped to nil (JSON null) is not supported; xhigh is supported only
	// when mapped (see Levels).
	ThinkingLevelMap map[llm.ThinkingLevel]*string `json:"thinkingLevelMap,omitempty"`
	// Input is "text" and maybe "image".
	Input         []string          `json:"input"`
	Cost          Cost              `json:"cost"`
	ContextWindow int               `json:"contextWindow"`
	MaxTokens     int               `json:"maxTokens"`
	Headers       map[string]string `json:"headers,omitempty"`
	// Compat is the reference's compat object, as written (the providers
	// read what they know of it).
	Compat RawJSON `json:"compat,omitempty"`
}

// RawJSON is a JSON value kept as written.
type RawJSON []byte

// MarshalJSON returns the value (null when empty).
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps a copy of the value.
func (r *RawJSON) UnmarshalJSON(b []byte) error {
	*r = append(RawJSON{}, b...)
	return nil
}

// Ref is "provider/id", how flags, sessions and messages name a model.
func (m Model) Ref() string { return m.Provider + "/" + m.ID }

// Images says whether the model takes images.
func (m Model) Images() bool { return slices.Contains(m.Input, "image") }

// Levels are the thinking levels the model has, lowest first (the
// reference's rule): only off without reasoning; every level a
// ThinkingLevelMap does not map to null, xhigh only when it is mapped.
func (m Model) Levels() []llm.ThinkingLevel {
	if !m.Reasoning {
		return []llm.ThinkingLevel{llm.ThinkingOff}
	}
	var out []llm.ThinkingLevel
	for _, l := range llm.ThinkingLevels {
		v, ok := m.ThinkingLevelMap[l]
		if ok && v == nil {
			continue
		}
		if l == llm.ThinkingXHigh && !ok {
			continue
		}
		out = append(out, l)
	}
	return out
}

// Clamp is the level the model uses for l: l when it has it, else the
// nearest level above, else the nearest below (the reference's rule).
func (m Model) Clamp(l llm.ThinkingLevel) llm.ThinkingLevel {
	have := m.Levels()
	if slices.Contains(have, l) {
		return l
	}
	i := slices.Index(llm.ThinkingLevels, l)
	if i < 0 {
		return have[0]
	}
	for _, c := range llm.ThinkingLevels[i+1:] {
		if slices.Contains(have, c) {
			return c
		}
	}
	for j := i - 1; j >= 0; j-- {
		if slices.Contains(have, llm.ThinkingLevels[j]) {
			return llm.ThinkingLevels[j]
		}
	}
	return have[0]
}

// NextLevel is the level after l among the model's, wrapping to the first
// (RPC cycle_thinking_level, Shift+Tab).
func (m Model) NextLevel(l llm.ThinkingLevel) llm.ThinkingLevel {
	have := m.Levels()
	i := slices.Index(have, m.Clamp(l))
	return have[(i+1)%len(have)]
}

// CostOf prices u by the model's prices (per million tokens; Input
// excludes the cache, as llm.Usage does).
func (m Model) CostOf(u llm.Usage) llm.Cost {
	c := llm.Cost{
		Input:      m.Cost.Input * float64(u.InputTokens) / 1e6,
		Output:     m.Cost.Output * float64(u.OutputTokens) / 1e6,
		CacheRead:  m.Cost.CacheRead * float64(u.CacheReadTokens) / 1e6,
		CacheWrite: m.Cost.CacheWrite * float64(u.CacheWriteTokens) / 1e6,
	}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	return c
}

// ParseLevel reads a thinking level by its name (any case).
func ParseLevel(s string) (llm.ThinkingLevel, bool) {
	l := llm.ThinkingLevel(strings.ToLower(strings.TrimSpace(s)))
	return l, slices.Contains(llm.ThinkingLevels, l)
}

// LevelNames is "off, minimal, low, medium, high, xhigh" for messages.
func LevelNames(ls []llm.ThinkingLevel) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = string(l)
	}
	return strings.Join(s, ", ")
}

// Provider is one provider: the catalogue's, the models file's, or both
// merged.
type Provider struct {
	Name    string
	BaseURL string
	API     string
	// APIKey is the models file's apiKey as written: the name of an
	// environment variable when one by that name is set, else the key.
	APIKey string
	// KeyEnv are the variables the catalogue reads the key from, in
	// order.
	KeyEnv []string
	// Headers are sent with every request (values resolved as APIKey).
	Headers map[string]string
	// AuthHeader adds "Authorization: Bearer KEY" (the models file's
	// authHeader).
	AuthHeader bool
	// DefaultModel is the model chosen when only the provider is named.
	DefaultModel string
	Models       []Model
	// Builtin says the catalogue has the provider.
	Builtin bool
}

// Key is the provider's API key and where it came from: the models
// file's apiKey (the value of the variable of that name when one is set,
// else the text itself: source "models.json"), else the first catalogue
// variable that is set. With no key, source names the variable to set ("",
// "" for a provider that names none).
func (p *Provider) Key(getenv func(string) string) (key, source string) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.HasPrefix(p.APIKey, "!") {
		return "", CommandKey
	}
	if p.APIKey != "" {
		if v := getenv(p.APIKey); v != "" {
			return v, p.APIKey
		}
		return p.APIKey, "models.json"
	}
	for _, e := range p.KeyEnv {
		if v := getenv(e); v != "" {
			return v, e
		}
	}
	if len(p.KeyEnv) > 0 {
		return "", p.KeyEnv[0]
	}
	return "", ""
}

// CommandKey is Key's source for a models-file apiKey that is a shell
// command ("!cmd"), which pi does not run.
const CommandKey = "!command"

// ResolveHeaders resolves each header value as an API key is resolved (a
// variable's value when one by that name is set, else the value).
func ResolveHeaders(h map[string]string, getenv func(string) string) map[string]string {
	if len(h) == 0 {
		return nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		if e := getenv(v); e != "" {
			v = e
		}
		out[k] = v
	}
	return out
}

// Model finds the provider's model with id (exact, then any case).
func (p *Provider) Model(id string) (Model, bool) {
	for _, m := range p.Models {
		if m.ID == id {
			return m, true
		}
	}
	for _, m := range p.Models {
		if strings.EqualFold(m.ID, id) {
			return m, true
		}
	}
	return Model{}, false
}
