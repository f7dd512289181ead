package conversation

import (
	"strings"
	"time"

	"github.com/pi-go/pi/runtime/skills"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/compaction"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/tool"
)

// buildAgent builds the agent loop on the current session with the
// runtime's active tools and hooks, the system prompt (with the context
// files: AGENTS.md or CLAUDE.md in PI_HOME and in every folder from / down
// to the working directory, as the reference agent loads them) and the
// events sent on through the conversation's sink. The agent goes on from
// the session's conversation, writes every message to it and compacts it
// by pi.toml's [compaction]. c.mu is held.
func (c *Conversation) buildAgent(mo app.ModelOptions) (*agent.Agent, modelNames, error) {
	rt := c.rt
	p := c.opts.Provider
	s, err := c.resolve(mo)
	if err != nil {
		return nil, modelNames{}, err
	}
	names := modelNames{provider: s.Model.Provider, model: s.Model.ID, api: s.Model.API}
	if p == nil {
		if p, err = rt.ProviderFor(s); err != nil {
			return nil, names, err
		}
	}
	cs, err := c.compactionSettingsFor(s.Model)
	if err != nil {
		return nil, names, err
	}
	rt.SyncTools()
	seen := rt.ToolsGeneration()
	ts, err := c.toolSet()
	if err != nil {
		return nil, names, err
	}
	// Between turns, the MCP servers' tools are brought up to date; when
	// they changed, the model gets the new tools and system prompt.
	refresh := func() *agent.ToolSet {
		rt.SyncTools()
		now := rt.ToolsGeneration()
		if now == seen {
			return nil
		}
		ts, err := c.toolSet()
		if err != nil {
			rt.Logger().Warn("tools not refreshed", "error", err.Error())
			return nil
		}
		seen = now
		return ts
	}
	sess := c.Session()
	comp := &hookedCompactor{c: c, inner: compaction.New(sess, p, cs), sess: sess, keep: cs.KeepRecentTokens}
	mod := s.Model
	cfg := agent.Config{
		Thinking: func() llm.ThinkingLevel { return c.thinkingFor(mod) },
		Price:    mod.CostOf,
		Provider: p, Tools: ts.Tools, Hooks: rt.Hooks(), SystemPrompt: ts.SystemPrompt,
		Sequential: rt.Config().ToolExecution == "sequential", Logger: rt.Logger().Named("agent"),
		OnEvent: c.sink, MaxTurns: c.opts.MaxTurns, Refresh: refresh,
		Messages:      session.ToLLM(sess.Context()),
		Compaction:    agent.Compaction{Compactor: comp, Settings: cs},
		OnReset:       sess.ResetLeaf,
		OnDropPrompts: c.persist.dropPrompts,
	}
	if c.opts.child == nil {
		// The extensions' prompt hooks are about the person's
		// conversation, not a sub-agent's task.
		rt.PromptHooks(&cfg)
		if rt.HasExtensionHook(app.HookContext) {
			cfg.Context = c.contextHook
		}
	}
	ag := agent.New(cfg)
	c.record(sess, mod, clampLevel(mod, c.thinking))
	c.persist.setNames(names)
	return ag, names, nil
}

// toolSet wraps the active tools and builds the system prompt that lists
// them.
func (c *Conversation) toolSet() (*agent.ToolSet, error) {
	defs := c.activeDefinitions()
	if c.taskActive() {
		defs = append(defs, c.taskDefinition())
	}
	tools, err := tool.WrapAll(defs, c.rt.ContextFactory())
	if err != nil {
		return nil, err
	}
	appendix := c.planPrompt()
	if ch := c.opts.child; ch != nil && ch.def.SystemPrompt != "" {
		appendix = strings.TrimSpace(appendix + "\n\n" + ch.def.SystemPrompt)
	}
	sys := agent.BuildSystemPrompt(agent.PromptOptions{
		Tools: defs, Cwd: c.rt.Cwd(), ContextFiles: c.contextFiles,
		Override: c.opts.SystemPrompt, Append: appendix, Now: time.Now(),
		Skills: skills.FormatForPrompt(c.res().Skills),
	})
	return &agent.ToolSet{Tools: tools, SystemPrompt: sys}, nil
}

// History returns the conversation of the current session as the model
// sees it (for a front end to show after a resume).
func (c *Conversation) History() []llm.Message { return session.ToLLM(c.Session().Context()) }

// Messages are the messages of the current branch as the session file
// holds them (RPC get_messages).
func (c *Conversation) Messages() []session.Message { return c.Session().Context() }

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
