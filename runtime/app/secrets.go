package app

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/redact"
	"github.com/pi-go/pi/runtime/tool"
)

// This file keeps the model's API key where it belongs: out of the
// environment of commands (bash, extensions' exec children) unless
// [tools.bash] pass_env lets it in, and out of every output (tool results
// before and after extension hooks, events, logs, errors, `pi tool call`'s
// result, bash full-output files). What the model said and what a tool
// receives are never rewritten.

// modelKey resolves the API key as the provider will use it
// (config.Config.APIKey owns the rule).
func modelKey(cfg *config.Config, flagKey string) (key, keyEnv string) { return cfg.APIKey(flagKey) }

// redactResult returns the patch that removes the key from a result's
// text blocks and details, or an empty patch when it holds none.
func redactResult(r *redact.Redactor, res tool.Result) tool.ResultPatch {
	var p tool.ResultPatch
	for i, b := range res.Content {
		if b.Type == "text" && r.Contains(b.Text) {
			if p.Content == nil {
				p.Content = slices.Clone(res.Content)
			}
			p.Content[i].Text = r.String(b.Text)
		}
	}
	if res.Details != nil {
		if raw, err := json.Marshal(res.Details); err == nil && r.Contains(string(raw)) {
			p.Details = r.Bytes(raw)
		}
	}
	return p
}

// redactionHooks returns h with the key redacted from tool results before
// the first extension tool_result hook sees them and again after the last,
// and from the input every hook is shown. The tool itself gets the model's
// arguments unchanged; only a tool_call hook that replaces them (its own
// act) passes on what it wrote.
func redactionHooks(h *tool.Hooks, r *redact.Redactor) *tool.Hooks {
	out := *h
	if !r.Active() {
		return &out
	}
	out.ToolCall = nil
	for _, hk := range h.ToolCall {
		next := hk.Func
		out.ToolCall = append(out.ToolCall, tool.ToolCallHook{Name: hk.Name, Func: func(ctx context.Context, c tool.CallInfo) (tool.ToolCallDecision, error) {
			c.Input = r.Bytes(c.Input)
			return next(ctx, c)
		}})
	}
	scrub := tool.ToolResultHook{
		Name: "pi redact-api-key",
		Func: func(_ context.Context, _ tool.CallInfo, res tool.Result) (tool.ResultPatch, error) {
			return redactResult(r, res), nil
		},
	}
	chain := []tool.ToolResultHook{scrub}
	for _, hk := range h.ToolResult {
		next := hk.Func
		chain = append(chain, tool.ToolResultHook{Name: hk.Name, Func: func(ctx context.Context, c tool.CallInfo, res tool.Result) (tool.ResultPatch, error) {
			c.Input = r.Bytes(c.Input)
			return next(ctx, c, res)
		}})
	}
	out.ToolResult = append(chain, scrub)
	return &out
}

// redactSpawnHooks wraps bash_spawn hooks so that they are shown the
// command and the environment values with the key redacted. What a hook
// hands back unchanged gets its real value again: a hook that rewrites
// nothing never turns the model's command into "[REDACTED]".
func redactSpawnHooks(hooks []tool.SpawnHook, r *redact.Redactor) []tool.SpawnHook {
	if !r.Active() {
		return hooks
	}
	out := make([]tool.SpawnHook, len(hooks))
	for i, hk := range hooks {
		next := hk.Func
		out[i] = tool.SpawnHook{Name: hk.Name, Func: func(ctx context.Context, s tool.BashSpawn) (tool.BashSpawn, error) {
			shown := tool.BashSpawn{Command: r.String(s.Command), Cwd: s.Cwd, Env: make(map[string]string, len(s.Env))}
			for k, v := range s.Env {
				shown.Env[k] = r.String(v)
			}
			got, err := next(ctx, shown)
			if err != nil {
				return s, err
			}
			if got.Command == shown.Command {
				got.Command = s.Command
			}
			if got.Env != nil {
				env := make(map[string]string, len(got.Env))
				for k, v := range got.Env {
					if sv, ok := shown.Env[k]; ok && v == sv {
						v = s.Env[k]
					}
					env[k] = v
				}
				got.Env = env
			}
			return got, nil
		}}
	}
	return out
}

// redactedJSON marshals v and removes the key; it is what the JSON event
// stream and the extensions' event hook get.
func redactedJSON(r *redact.Redactor, v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return r.Bytes(b), nil
}
