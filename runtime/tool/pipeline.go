package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
)

// NotFound is the model-visible result for a call of an unknown tool.
func NotFound(name string) Result { return ErrorResult(fmt.Sprintf("Tool %s not found", name)) }

// Preflight prepares, validates and runs the tool_call hooks for one call. It
// returns the final arguments, or a non-nil error result (validation failed,
// blocked) that is what the model gets instead of running the tool.
func Preflight(ctx context.Context, t AgentTool, hooks *Hooks, callID string, raw json.RawMessage) (json.RawMessage, *Result) {
	args, err := t.PrepareArguments(raw)
	if err != nil {
		r := ErrorResult(err.Error())
		return nil, &r
	}
	if err := t.Validate(args); err != nil {
		r := ErrorResult(err.Error())
		return nil, &r
	}
	if hooks == nil || len(hooks.ToolCall) == 0 {
		return args, nil
	}
	paths, blocked := preflightPaths(t, args, "")
	if blocked != nil {
		return nil, blocked
	}
	for _, h := range hooks.ToolCall {
		d, err := h.Func(ctx, CallInfo{ID: callID, Name: t.Name(), Input: args, Paths: paths})
		if err != nil {
			r := ErrorResult(fmt.Sprintf("Tool execution was blocked: %s failed: %v", h.Name, err))
			return nil, &r
		}
		if d.Block {
			reason := d.Reason
			if reason == "" {
				reason = "Tool execution was blocked"
			}
			r := ErrorResult(reason)
			return nil, &r
		}
		if d.Input != nil {
			if err := t.Validate(d.Input); err != nil {
				r := ErrorResult(fmt.Sprintf("%s (arguments as replaced by %s)", err.Error(), h.Name))
				return nil, &r
			}
			args = d.Input
			if paths, blocked = preflightPaths(t, args, h.Name); blocked != nil {
				return nil, blocked
			}
		}
	}
	return args, nil
}

// preflightPaths computes the paths hooks see; a tool that cannot name them
// is blocked (fail closed). replacedBy names the hook whose input this is.
func preflightPaths(t AgentTool, args json.RawMessage, replacedBy string) ([]string, *Result) {
	paths, err := callPaths(t, args)
	if err != nil {
		msg := fmt.Sprintf("Tool execution was blocked: cannot tell which paths %s would open: %v", t.Name(), err)
		if replacedBy != "" {
			msg += fmt.Sprintf(" (arguments as replaced by %s)", replacedBy)
		}
		r := ErrorResult(msg)
		return nil, &r
	}
	return paths, nil
}

// Execute runs the tool with prepared arguments, turning a Go error or a
// panic into an error result, then chains the tool_result hooks.
func Execute(ctx context.Context, t AgentTool, hooks *Hooks, callID string, args json.RawMessage, update UpdateFunc) Result {
	r := executeSafely(ctx, t, callID, args, update)
	if hooks == nil {
		return r
	}
	for _, h := range hooks.ToolResult {
		p, err := h.Func(ctx, CallInfo{ID: callID, Name: t.Name(), Input: args}, r)
		if err != nil {
			if hooks.OnHookError != nil {
				hooks.OnHookError(h.Name, err)
			}
			continue
		}
		r = p.Apply(r)
	}
	return r
}

func executeSafely(ctx context.Context, t AgentTool, callID string, args json.RawMessage, update UpdateFunc) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			r = ErrorResult(fmt.Sprintf("tool %s panicked: %v\n%s", t.Name(), p, debug.Stack()))
		}
	}()
	res, err := t.Execute(ctx, callID, args, update)
	if err != nil {
		return ErrorResult(err.Error())
	}
	if res.Content == nil {
		res.Content = []ContentBlock{}
	}
	return res
}

// Run is the whole pipeline for one call: find the tool, Preflight, Execute.
func Run(ctx context.Context, tools []AgentTool, hooks *Hooks, name, callID string, raw json.RawMessage, update UpdateFunc) Result {
	t := Find(tools, name)
	if t == nil {
		return NotFound(name)
	}
	args, blocked := Preflight(ctx, t, hooks, callID, raw)
	if blocked != nil {
		return *blocked
	}
	return Execute(ctx, t, hooks, callID, args, update)
}

// Find returns the tool of that name, or nil.
func Find(tools []AgentTool, name string) AgentTool {
	for _, t := range tools {
		if t.Name() == name {
			return t
		}
	}
	return nil
}
