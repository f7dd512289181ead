package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/tool"
)

// This file wires the extensions' later additions (ABI 1.1) into the
// runtime: the facts extensions are told at init, the kv folder, the tool
// runner of tool.call, the prompt hooks of the agent loop and the list of
// their slash commands. The input hooks and running a command are what a
// conversation calls (seam.go, command.go).

// The modes of Options.Mode, as extensions are told them.
const (
	ModeInteractive = extensions.ModeInteractive
	ModePrint       = extensions.ModePrint
	ModeJSON        = extensions.ModeJSON
	ModeRPC         = extensions.ModeRPC
	ModeTool        = extensions.ModeTool
	ModeInspect     = extensions.ModeInspect
)

// StopCappedWarning is what a run whose stop hooks kept it going
// agent.MaxStopContinues times ends with (on stderr in cmd/pi).
var StopCappedWarning = fmt.Sprintf("stop hooks continued the run %d times; ending it", agent.MaxStopContinues)

func (r *Runtime) mode() string { return firstNonEmpty(r.opts.Mode, ModePrint) }

// trusted is init's "trusted": cfg's project pi.toml is trusted, or
// trusted for this run (--trust, PI_TRUST=1); false without one.
func (r *Runtime) trusted(cfg *config.Config) bool {
	if r.opts.Trust {
		return cfg.ProjectFile != ""
	}
	if cfg.ProjectFile == "" {
		return false
	}
	ok, err := config.IsTrusted(r.piHome, cfg.ProjectFile)
	return err == nil && ok
}

// kvDir is where the extensions' kv stores live: $PI_HOME/kv.
func (r *Runtime) kvDir() string { return config.KVDir(r.piHome) }

// guestToolRunner runs an extension's tool.call through the whole pipeline
// the model's calls take (the host has checked grants.tools, the caller's
// own tools and the depth); inside a sub-agent's call, only a tool of its
// set runs (WithToolLimit). A guest never waits for a person: asks are
// non-interactive, approved only with --yes. The result has the key
// redacted.
func (r *Runtime) guestToolRunner(ctx context.Context, name, callID string, input json.RawMessage) (tool.Result, error) {
	if msg := limitRefusal(ctx, name); msg != "" {
		return tool.ErrorResult(msg), nil // a sub-agent's call: only its tools (toollimit.go)
	}
	def, ok := r.registry.Lookup(name)
	if !ok {
		return tool.Result{}, fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	t, err := tool.Wrap(def, r.ContextFactory())
	if err != nil {
		return tool.Result{}, err
	}
	hooks := *r.Hooks()
	hooks.Approve = nil
	if _, yes := r.opts.Approver.(YesApprover); yes {
		hooks.Approve = func(context.Context, tool.ApprovalRequest) (bool, error) { return true, nil }
	}
	res := tool.Run(ctx, []tool.AgentTool{t}, &hooks, name, callID, input, nil)
	return redactResult(r.redactor, res).Apply(res), nil
}

// promptHooks adds the extensions' before_agent_start and stop hooks to
// an agent's configuration.
func (r *Runtime) promptHooks(cfg *agent.Config) {
	host := r.extHost()
	if host == nil {
		return
	}
	_, before, stop := host.HasHooks()
	if before {
		cfg.BeforeStart = func(ctx context.Context, prompt, system string) (string, [][]tool.ContentBlock) {
			bs := host.BeforeAgentStart(ctx, prompt, system)
			return bs.SystemPrompt, bs.Messages
		}
	}
	if stop {
		cfg.Stop = func(ctx context.Context, s agent.StopInfo) (string, bool) {
			a := host.Stop(ctx, extensions.StopRequest{LastText: r.redactor.String(s.LastText), Turns: s.Turns})
			if a.Continue {
				r.logger.Debug("a stop hook continued the run", "extension", a.By)
			}
			return a.Message, a.Continue
		}
		cfg.OnStopCapped = func() { r.warn(StopCappedWarning) }
	}
}

// CommandInfo is one slash command as /help lists it.
type CommandInfo struct {
	// Name is without the slash.
	Name         string `json:"name"`
	Description  string `json:"description"`
	ArgumentHint string `json:"argumentHint,omitempty"`
	// Extension offers it; "" for a built-in command.
	Extension string `json:"extension,omitempty"`
	// Source is "prompt" for a prompt template, "skill" for /skill:NAME
	// (the reference's get_commands sources); "" otherwise.
	Source string `json:"source,omitempty"`
}

// Commands lists the extensions' slash commands in load order.
func (r *Runtime) Commands() []CommandInfo {
	var out []CommandInfo
	if h := r.extHost(); h != nil {
		for _, c := range h.Commands() {
			out = append(out, CommandInfo{Name: c.Name, Description: c.Description, ArgumentHint: c.ArgumentHint, Extension: c.Extension})
		}
	}
	return out
}
