package app

import (
	"context"
	"time"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
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
}

// NewAgent builds the agent loop with the active tools, the runtime's
// hooks, the system prompt (with the project's AGENTS.md) and the events
// sent on to the extensions, with the API key redacted.
//
// # Errors
//
// A provider that cannot be resolved (see ResolveModel), or an active tool
// whose definition cannot be wrapped.
func (r *Runtime) NewAgent(o AgentOptions) (*agent.Agent, error) {
	p := o.Provider
	if p == nil {
		var err error
		if p, err = r.Provider(); err != nil {
			return nil, err
		}
	}
	tools, err := r.registry.ActiveTools(r.ContextFactory())
	if err != nil {
		return nil, err
	}
	agentsMD, err := agent.LoadAgentsMD(r.cwd)
	if err != nil {
		r.logger.Warn("AGENTS.md not read", "error", err)
	}
	sys := agent.BuildSystemPrompt(agent.PromptOptions{
		Tools: r.registry.ActiveDefinitions(), Cwd: r.cwd, AgentsMD: agentsMD,
		Override: o.SystemPrompt, Append: o.AppendSystemPrompt, Now: time.Now(),
	})
	cfg := agent.Config{
		Provider: p, Tools: tools, Hooks: r.hooks, SystemPrompt: sys,
		Sequential: r.cfg.ToolExecution == "sequential", Logger: r.logger.Named("agent"),
		OnEvent: r.eventSink(o.OnEvent), MaxTurns: o.MaxTurns,
	}
	r.promptHooks(&cfg)
	return agent.New(cfg), nil
}

// eventSink passes each event to next, then the ones extensions take to
// the extension host, redacted first.
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
