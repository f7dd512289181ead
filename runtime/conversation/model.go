package conversation

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/compaction"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/models"
	"github.com/pi-go/pi/runtime/session"
)

// This file holds the model and the thinking level of the conversation:
// which model the next prompt goes to, switching it (/model, RPC
// set_model and cycle_model, Ctrl+P), the thinking level (/thinking,
// --thinking, RPC set_thinking_level and cycle_thinking_level,
// Shift+Tab), what the session records of both (model_change,
// thinking_level_change, as the reference writes them) and their restoring
// when a session is resumed.

// ModelInfo describes a model in the reference's Model shape (RPC
// get_state, set_model, get_available_models).
type ModelInfo = models.Model

// DefaultThinkingLevel is the level a reasoning model starts at when
// neither --thinking nor the session says one (the reference's).
const DefaultThinkingLevel = llm.ThinkingMedium

// ParseThinkingLevel reads a thinking level by its name (any case).
func ParseThinkingLevel(s string) (llm.ThinkingLevel, bool) { return models.ParseLevel(s) }

// resolve resolves model options mo; a provider given in Options is the
// model "custom" (or Options.ModelName) of provider "custom".
func (c *Conversation) resolve(mo app.ModelOptions) (app.ModelSettings, error) {
	if c.opts.Provider != nil {
		id := firstNonEmpty(c.opts.ModelName, "custom")
		m := models.Model{
			ID: id, Name: id, API: models.APIOpenAICompletions, Provider: "custom",
			Input: []string{"text", "image"}, ContextWindow: models.DefaultContextWindow, MaxTokens: models.DefaultMaxTokens,
		}
		return app.ModelSettings{Model: m, Name: id, Images: true}, nil
	}
	return c.rt.ResolveModel(mo)
}

// Model describes the model the next prompt goes to (a provider given in
// Options is provider "custom").
//
// # Errors
//
// The settings resolve to no model (app.ResolveModel).
func (c *Conversation) Model() (ModelInfo, error) {
	c.mu.Lock()
	mo := c.model
	c.mu.Unlock()
	s, err := c.resolve(mo)
	if err != nil {
		return ModelInfo{}, err
	}
	return s.Model, nil
}

// ModelName is the id of the model the next prompt goes to ("" when none
// is configured).
func (c *Conversation) ModelName() string {
	m, _ := c.Model()
	return m.ID
}

// compactionSettingsFor are pi.toml's compaction settings with the
// model's context window when pi.toml sets none.
func (c *Conversation) compactionSettingsFor(m models.Model) (compaction.Settings, error) {
	cs, err := c.rt.Config().CompactionSettings()
	if err != nil {
		return cs, err
	}
	if c.rt.Config().Model.ContextWindow == 0 && m.ContextWindow > 0 && c.opts.Provider == nil {
		cs.ContextWindow = m.ContextWindow
		if cs.ReserveTokens >= cs.ContextWindow {
			cs.ReserveTokens = cs.ContextWindow / 4
		}
	}
	return cs, nil
}

// compactionSettings are compactionSettingsFor the current model.
func (c *Conversation) compactionSettings() (compaction.Settings, error) {
	m, err := c.Model()
	if err != nil {
		return c.rt.Config().CompactionSettings()
	}
	return c.compactionSettingsFor(m)
}

// ContextWindow is the context window in tokens that compaction works
// with ([compaction] context_window, else the model's); 0 when it is not
// known.
func (c *Conversation) ContextWindow() int {
	cs, err := c.compactionSettings()
	if err != nil {
		return 0
	}
	return cs.ContextWindow
}

// ThinkingLevel is the level the next request is sent with: the one set
// (--thinking, /thinking, the session), else DefaultThinkingLevel, as the
// model has it (off for a model without reasoning).
func (c *Conversation) ThinkingLevel() llm.ThinkingLevel {
	m, err := c.Model()
	if err != nil {
		return llm.ThinkingOff
	}
	return c.thinkingFor(m)
}

func (c *Conversation) thinkingFor(m models.Model) llm.ThinkingLevel {
	c.mu.Lock()
	l := c.thinking
	c.mu.Unlock()
	return clampLevel(m, l)
}

// clampLevel is the level m uses for the level set l.
func clampLevel(m models.Model, l llm.ThinkingLevel) llm.ThinkingLevel {
	if l == "" {
		l = DefaultThinkingLevel
	}
	return m.Clamp(l)
}

// ThinkingLevels are the levels the current model has, lowest first.
func (c *Conversation) ThinkingLevels() []llm.ThinkingLevel {
	m, err := c.Model()
	if err != nil {
		return []llm.ThinkingLevel{llm.ThinkingOff}
	}
	return m.Levels()
}

// SetThinkingLevel sets the thinking level from the next request on and
// records it in the session. A level the model lacks becomes the nearest
// it has (returned; the caller tells the person when it differs).
//
// # Errors
//
// A name that is not a level.
func (c *Conversation) SetThinkingLevel(level string) (llm.ThinkingLevel, error) {
	l, ok := models.ParseLevel(level)
	if !ok {
		return "", fmt.Errorf("set thinking level: %q is not a level (want one of %s)", level, models.LevelNames(llm.ThinkingLevels))
	}
	m, err := c.Model()
	if err != nil {
		c.mu.Lock()
		c.thinking = l
		c.mu.Unlock()
		return l, nil
	}
	eff := m.Clamp(l)
	c.mu.Lock()
	c.thinking = eff
	c.mu.Unlock()
	c.record(c.Session(), m, eff)
	return eff, nil
}

// CycleThinkingLevel moves to the model's next level, wrapping (RPC
// cycle_thinking_level, Shift+Tab); false when the model has no reasoning.
func (c *Conversation) CycleThinkingLevel() (llm.ThinkingLevel, bool) {
	m, err := c.Model()
	if err != nil || !m.Reasoning {
		return "", false
	}
	next := m.NextLevel(c.thinkingFor(m))
	c.mu.Lock()
	c.thinking = next
	c.mu.Unlock()
	c.record(c.Session(), m, next)
	return next, true
}

// record writes a model_change when the session's last model is not m,
// and a thinking_level_change when its last level is not the current
// one, level. c.mu may be held.
func (c *Conversation) record(sess *session.Session, m models.Model, level llm.ThinkingLevel) {
	if sess == nil {
		return
	}
	if prov, id := sess.Model(); prov != m.Provider || id != m.ID {
		if _, err := sess.AppendModelChange(m.Provider, m.ID); err != nil {
			c.rt.Logger().Warn("session: model change not recorded", "error", err.Error())
		}
	}
	if sess.ThinkingLevel() != string(level) {
		if _, err := sess.AppendThinkingLevelChange(string(level)); err != nil {
			c.rt.Logger().Warn("session: thinking level change not recorded", "error", err.Error())
		}
	}
}

// SetModel makes the conversation talk to model name of provider from the
// next prompt on (RPC set_model, /model); the session records the change.
// provider may be empty: name is then "provider/id", an id of the current
// provider, a name on the current OpenAI-compatible endpoint, or an id one
// provider alone lists. The thinking level is kept (as the new model has
// it). What is queued stays.
//
// # Errors
//
// A run goes on (agent.ErrBusy); an empty name; a model that does not
// resolve (unknown, no key) or whose API this build lacks; a provider
// given in Options (a scripted model).
func (c *Conversation) SetModel(provider, name string) error {
	return c.setModel(provider, name, sourceSet)
}

// setModel is SetModel, telling the extensions the change came from
// source (model_select, run12.go).
func (c *Conversation) setModel(provider, name, source string) error {
	if err := c.idle("set model"); err != nil {
		return err
	}
	name, provider = strings.TrimSpace(name), strings.TrimSpace(provider)
	cur, err := c.Model()
	switch {
	case err != nil && c.opts.Provider != nil:
		return fmt.Errorf("set model: %w", err)
	case name == "":
		return fmt.Errorf("set model: no model name")
	case c.opts.Provider != nil:
		return fmt.Errorf("set model: the model is %q, given by the front end (a scripted model), and cannot be changed", cur.ID)
	}
	reg, err := c.rt.Models()
	if err != nil {
		return fmt.Errorf("set model: %w", err)
	}
	c.mu.Lock()
	mo := c.model
	c.mu.Unlock()
	next := app.ModelOptions{Thinking: mo.Thinking, Scope: mo.Scope}
	endpoint := cur.ID != "" && reg.Provider(cur.Provider) == nil // an endpoint named by its URL
	if provider == "" {
		if p, id, ok := strings.Cut(name, "/"); ok && reg.Provider(p) != nil {
			if _, found := reg.Provider(p).Model(id); found || !endpoint {
				provider, name = p, id
			}
		}
	}
	switch {
	case endpoint && (provider == "" || provider == cur.Provider):
		next = mo
		next.Name = name
	case provider == "" && cur.Provider != "":
		if p := reg.Provider(cur.Provider); p != nil {
			if _, ok := p.Model(name); ok {
				provider = cur.Provider
			}
		}
		fallthrough
	default:
		if provider == "" {
			m, amb, ok := reg.Find(name)
			switch {
			case len(amb) > 0:
				return fmt.Errorf("set model: %q is offered by %s: give provider/%s", name, strings.Join(amb, ", "), name)
			case !ok:
				return fmt.Errorf("set model: model not found: %s (pi models lists the models)", name)
			}
			provider, name = m.Provider, m.ID
		}
		if p := reg.Provider(provider); p == nil {
			return fmt.Errorf("set model: model not found: %s/%s (unknown provider; pi models lists them)", provider, name)
		} else if _, ok := p.Model(name); !ok {
			return fmt.Errorf("set model: model not found: %s/%s (pi models --provider %s lists its models; models.json adds one)", provider, name, p.Name)
		}
		next.Provider, next.Name = provider, name
		if strings.EqualFold(provider, cur.Provider) {
			next.APIKey = mo.APIKey
		}
	}
	s, err := c.rt.ResolveModel(next)
	if err != nil {
		return fmt.Errorf("set model: %w", err)
	}
	if err := app.APIBuilt(s.Model.API); err != nil {
		return fmt.Errorf("set model: %s: %w", s.Model.Ref(), err)
	}
	c.mu.Lock()
	if !cur.Reasoning {
		// The reference: leaving a model without reasoning goes back to
		// the default level.
		c.thinking = ""
	} else if c.thinking == "" {
		c.thinking = cur.Clamp(DefaultThinkingLevel)
	}
	c.model = next
	c.mu.Unlock()
	c.dropAgent()
	c.record(c.Session(), s.Model, c.thinkingFor(s.Model))
	c.rt.ModelSelected(cur.Provider, cur.ID, s.Model.Provider, s.Model.ID, source)
	return nil
}

// AvailableModels are the models that can be used now: their provider's
// key is set and this build talks their API (RPC get_available_models,
// the /model picker); the current model is always among them.
//
// # Errors
//
// The models file is not valid.
func (c *Conversation) AvailableModels() ([]ModelInfo, error) {
	reg, err := c.rt.Models()
	if err != nil {
		return nil, err
	}
	var out []ModelInfo
	for _, m := range reg.Models() {
		if app.ModelUsable(reg, m) == nil {
			out = append(out, m)
		}
	}
	if cur, err := c.Model(); err == nil && !slices.ContainsFunc(out, func(m ModelInfo) bool { return m.Provider == cur.Provider && m.ID == cur.ID }) {
		out = append([]ModelInfo{cur}, out...)
	}
	return out, nil
}

// CycleResult is what cycle_model answers (the reference's shape).
type CycleResult struct {
	Model         ModelInfo         `json:"model"`
	ThinkingLevel llm.ThinkingLevel `json:"thinkingLevel"`
	IsScoped      bool              `json:"isScoped"`
}

// CycleModel switches to the next model of the scope (--models), or of
// every available model without one, wrapping (RPC cycle_model, Ctrl+P);
// nil when there is no other model.
//
// # Errors
//
// As SetModel.
func (c *Conversation) CycleModel() (*CycleResult, error) {
	if err := c.idle("cycle model"); err != nil {
		return nil, err
	}
	c.mu.Lock()
	scope := c.model.Scope
	c.mu.Unlock()
	avail, err := c.AvailableModels()
	if err != nil {
		return nil, err
	}
	var list []ScopedModel
	for _, m := range avail {
		list = append(list, ScopedModel{ModelInfo: m})
	}
	if len(scope) > 0 {
		list = ScopeModels(avail, scope)
	}
	if len(list) <= 1 {
		return nil, nil
	}
	cur, _ := c.Model()
	i := slices.IndexFunc(list, func(m ScopedModel) bool { return m.Provider == cur.Provider && m.ID == cur.ID })
	if i < 0 {
		i = 0
	}
	next := list[(i+1)%len(list)]
	if err := c.setModel(next.Provider, next.ID, sourceCycle); err != nil {
		return nil, err
	}
	if next.Level != "" {
		// A level the pattern names (--models ID:LEVEL) replaces the
		// current one, as in the reference.
		if _, err := c.SetThinkingLevel(string(next.Level)); err != nil {
			return nil, err
		}
	}
	return &CycleResult{Model: next.ModelInfo, ThinkingLevel: c.ThinkingLevel(), IsScoped: len(scope) > 0}, nil
}

// ScopedModel is a model of the --models scope and the thinking level its
// pattern names ("" for none: the level goes on as it is).
type ScopedModel struct {
	ModelInfo
	Level llm.ThinkingLevel
}

// ScopeModels are the models of avail that the patterns name, in the
// patterns' order: "provider/id" or an id, each may be a glob
// ("anthropic/*", "*sonnet*") and may end in ":LEVEL" (a thinking level),
// as the reference's --models reads them: a glob's level suffix is taken
// off first; a name is matched whole first (an id such as
// "qwen2.5-coder:7b" has a colon of its own), then without the suffix.
func ScopeModels(avail []ModelInfo, patterns []string) []ScopedModel {
	var out []ScopedModel
	add := func(p string, level llm.ThinkingLevel) bool {
		found := false
		for _, m := range avail {
			ref, id := strings.ToLower(m.Ref()), strings.ToLower(m.ID)
			okRef, _ := path.Match(p, ref)
			okID, _ := path.Match(p, id)
			if !okRef && !okID && p != ref && p != id {
				continue
			}
			found = true
			if !slices.ContainsFunc(out, func(o ScopedModel) bool { return o.Ref() == m.Ref() }) {
				out = append(out, ScopedModel{m, level})
			}
		}
		return found
	}
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		bare, level := p, llm.ThinkingLevel("")
		if i := strings.LastIndexByte(p, ':'); i > 0 {
			if l, ok := models.ParseLevel(p[i+1:]); ok {
				bare, level = p[:i], l
			}
		}
		if strings.ContainsAny(p, "*?[") {
			add(bare, level)
			continue
		}
		if !add(p, "") && level != "" {
			add(bare, level)
		}
	}
	return out
}

// startScoped makes the first model of the --models scope the model, with
// the level its pattern names, when a new session starts and no flag
// names a model (the reference's order: the command line's model, then
// the scope's first, then the rest).
func (c *Conversation) startScoped() {
	c.mu.Lock()
	mo := c.model
	c.mu.Unlock()
	if len(mo.Scope) == 0 || mo.Provider != "" || mo.Name != "" || mo.BaseURL != "" || c.opts.Provider != nil {
		return
	}
	avail, err := c.AvailableModels()
	if err != nil {
		return
	}
	list := ScopeModels(avail, mo.Scope)
	if len(list) == 0 {
		c.rt.Warn(fmt.Sprintf("--models %s names no usable model (pi models lists them)", strings.Join(mo.Scope, ",")))
		return
	}
	first := list[0]
	next := mo
	next.Provider, next.Name = first.Provider, first.ID
	if _, err := c.rt.ResolveModel(next); err != nil {
		c.rt.Warn(fmt.Sprintf("--models: %s: %v", first.Ref(), err))
		return
	}
	c.mu.Lock()
	c.model = next
	if first.Level != "" && mo.Thinking == "" {
		c.thinking = first.Level
	}
	c.mu.Unlock()
}

// restoreModel takes the model and the thinking level a resumed session
// last used (its last model_change, else its last assistant message's
// model; its last thinking_level_change), as the reference does; a model
// that is no longer available is left, with a warning.
func (c *Conversation) restoreModel(sess *session.Session, keepModel, keepThinking bool) {
	if !keepThinking {
		if l, ok := models.ParseLevel(sess.ThinkingLevel()); ok {
			c.mu.Lock()
			c.thinking = l
			c.mu.Unlock()
		}
	}
	prov, id := sess.Model()
	if keepModel || id == "" || c.opts.Provider != nil {
		return
	}
	cur, err := c.Model()
	if err == nil && cur.Provider == prov && cur.ID == id {
		return
	}
	c.mu.Lock()
	mo := c.model
	c.mu.Unlock()
	next := app.ModelOptions{Provider: prov, Name: id, Thinking: mo.Thinking, Scope: mo.Scope}
	if err == nil && cur.Provider == prov {
		next = mo // the same endpoint or provider: only the id changes
		next.Name = id
	}
	if _, rerr := c.rt.ResolveModel(next); rerr != nil {
		now := "no model is configured (pi models lists the usable ones)"
		if err == nil {
			now = "going on with " + cur.Ref()
		}
		c.rt.Warn(fmt.Sprintf("could not restore the session's model %s/%s (%v); %s", prov, id, rerr, now))
		return
	}
	c.mu.Lock()
	c.model = next
	c.mu.Unlock()
	if rm, rerr := c.Model(); rerr == nil {
		c.rt.ModelSelected(cur.Provider, cur.ID, rm.Provider, rm.ID, sourceRestore)
	}
}
