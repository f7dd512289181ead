package app

import (
	"context"
	"time"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/tool"
)

// AgentOptions say how to build an agent loop on a Runtime.
type AgentOptions struct {
	// Provider streams the model's turns; nil means the OpenAI-compatible
	// provider of the resolved model settings (Runtime.Provider).
	Provider llm.Provider
	// SystemPrompt replaces the built-in intro, tool list and guidelines
	// (--system-prompt); AppendSystemPrompt is added after them.
	SystemPrompt, AppendSystemPrompt string
	// OnEvent receives every event of a run (see agent.Config.OnEvent). The
	// events carry what tools returned: pass what you print through
	// Runtime.Redactor.
	OnEvent func(agent.Event)
	// MaxTurns bounds the model calls of one run; 0 means unlimited.
	MaxTurns int
	// ModelName names the model in the session's assistant messages when
	// Provider is set here; default "custom".
	ModelName string
}

// NewAgent builds the agent loop with the active tools, the runtime's
// hooks, the system prompt (with the context files: AGENTS.md or CLAUDE.md
// in PI_HOME and in every folder from / down to the working directory, as
// the reference agent loads them) and the events
// sent on to the extensions, with the API key redacted. The agent goes on
// from the session's conversation (a resumed session), writes every message
// to the session, and compacts it by pi.toml's [compaction]; it emits
// session_start here and session_shutdown when the runtime closes.
//
// # Errors
//
// A provider that cannot be resolved (see ResolveModel), an active tool
// whose definition cannot be wrapped, or compaction settings that do not fit
// the context window.
func (r *Runtime) NewAgent(o AgentOptions) (*agent.Agent, error) {
	p := o.Provider
	names := modelNames{provider: "custom", model: firstNonEmpty(o.ModelName, "custom")}
	if p == nil {
		s, err := ResolveModel(r.cfg, r.modelOptions())
		if err != nil {
			return nil, err
		}
		if p, err = r.Provider(); err != nil {
			return nil, err
		}
		names = modelNames{provider: providerName(s.BaseURL), model: s.Name}
	}
	cs, err := r.cfg.CompactionSettings()
	if err != nil {
		return nil, err
	}
	contextFiles, err := agent.LoadContextFiles(r.cwd, r.piHome, func(path string) ([]byte, error) {
		// Instructions for the model from a file another user can change
		// (a shared /tmp, a parent folder) are a prompt injection: refused
		// as a pi.toml would be.
		return config.ReadSafeFile(path, "context file")
	})
	if err != nil {
		r.logger.Warn("context file not read", "error", err)
	}
	r.syncMCP()
	seen := r.toolsGen.Load()
	ts, err := r.toolSet(o, contextFiles)
	if err != nil {
		return nil, err
	}
	// Between turns, the MCP servers' tools are brought up to date; when
	// they changed, the model gets the new tools and system prompt.
	refresh := func() *agent.ToolSet {
		r.syncMCP()
		now := r.toolsGen.Load()
		if now == seen {
			return nil
		}
		ts, err := r.toolSet(o, contextFiles)
		if err != nil {
			r.logger.Warn("tools not refreshed", "error", err.Error())
			return nil
		}
		seen = now
		return ts
	}
	sess := r.Session()
	comp := &compactor{s: sess, provider: p, keepRecent: cs.KeepRecentTokens}
	persist := &sessionSink{r: r, names: names}
	next := o.OnEvent
	sink := r.eventSink(func(ev agent.Event) {
		persist.onEvent(ev)
		if next != nil {
			next(ev)
		}
	})
	cfg := agent.Config{
		Provider: p, Tools: ts.Tools, Hooks: r.hooks, SystemPrompt: ts.SystemPrompt,
		Sequential: r.cfg.ToolExecution == "sequential", Logger: r.logger.Named("agent"),
		OnEvent: sink, MaxTurns: o.MaxTurns, Refresh: refresh,
		Messages: session.ToLLM(sess.Context()),
		Compaction: agent.Compaction{
			Compactor: comp, Auto: cs.Enabled, ContextWindow: cs.ContextWindow, ReserveTokens: cs.ReserveTokens,
		},
		OnReset:       sess.ResetLeaf,
		OnDropPrompts: persist.dropPrompts,
	}
	r.promptHooks(&cfg)
	ag := agent.New(cfg)
	if prov, model := sess.Model(); prov != names.provider || model != names.model {
		if _, err := sess.AppendModelChange(names.provider, names.model); err != nil {
			r.logger.Warn("session: model change not recorded", "error", err.Error())
		}
	}
	r.mu.Lock()
	r.agent, r.compactor, r.names = ag, comp, names
	first := !r.started
	r.started = true
	resumed := r.resumed
	if first {
		r.closers = append(r.closers, func() {
			sink(agent.Event{Type: agent.EventSessionShutdown, SessionID: r.Session().ID(), SessionFile: r.sessionFile()})
		})
	}
	r.mu.Unlock()
	sink(agent.Event{Type: agent.EventSessionStart, SessionID: sess.ID(), SessionFile: r.sessionFile(), Resumed: &resumed})
	return ag, nil
}

// toolSet wraps the active tools and builds the system prompt that lists
// them.
func (r *Runtime) toolSet(o AgentOptions, contextFiles []agent.ContextFile) (*agent.ToolSet, error) {
	defs := r.registry.ActiveDefinitions()
	tools, err := tool.WrapAll(defs, r.ContextFactory())
	if err != nil {
		return nil, err
	}
	sys := agent.BuildSystemPrompt(agent.PromptOptions{
		Tools: defs, Cwd: r.cwd, ContextFiles: contextFiles,
		Override: o.SystemPrompt, Append: o.AppendSystemPrompt, Now: time.Now(),
	})
	return &agent.ToolSet{Tools: tools, SystemPrompt: sys}, nil
}

// eventSink passes each event to next, then the ones extensions take to
// the extension host, redacted first: the six of ABI 1.0, and the types
// an extension subscribed to (ABI 1.1 `events`: message_end,
// session_start, session_shutdown, compaction_start, compaction_end).
func (r *Runtime) eventSink(next func(agent.Event)) func(agent.Event) {
	if r.host == nil {
		return next
	}
	host := r.host
	return func(ev agent.Event) {
		if next != nil {
			next(ev)
		}
		if !host.TakesEvent(string(ev.Type)) {
			return
		}
		raw, err := redactedJSON(r.redactor, ev)
		if err != nil {
			r.logger.Warn("extension event: cannot marshal event", "type", string(ev.Type), "error", err.Error())
			return
		}
		host.Event(context.Background(), raw)
	}
}
