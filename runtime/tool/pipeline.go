package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
)

// NotFound is the model-visible result for a call of an unknown tool.
func NotFound(name string) Result { return ErrorResult(fmt.Sprintf("Tool %s not found", name)) }

// Preflight prepares, validates, runs the tool_call hooks, the permission
// check and the approval for one call. It returns the final arguments with
// the value their validation parsed (Args, for Execute), or a non-nil error
// result (validation failed, blocked, denied, not approved) that is what
// the model gets instead of running the tool.
//
// Hooks run in order; the first block ends the chain; an ask is remembered
// and the chain goes on (a later hook may still block); then the permission
// check runs on the final arguments; then, if anything asked, the person is
// asked once with every question.
func Preflight(ctx context.Context, t AgentTool, hooks *Hooks, callID string, raw json.RawMessage) (Args, *Result) {
	prepared, err := t.PrepareArguments(raw)
	if err != nil {
		r := ErrorResult(err.Error())
		return Args{}, &r
	}
	args, err := t.ValidateArgs(prepared)
	if err != nil {
		r := ErrorResult(err.Error())
		return Args{}, &r
	}
	if hooks == nil || (len(hooks.ToolCall) == 0 && hooks.Permission == nil) {
		return args, nil
	}
	paths, blocked := preflightPaths(t, args, "")
	if blocked != nil {
		return Args{}, blocked
	}
	var asks []string
	for _, h := range hooks.ToolCall {
		d, err := h.Func(ctx, CallInfo{ID: callID, Name: t.Name(), Input: args.JSON, Paths: paths})
		if err != nil {
			return Args{}, blockedResult(fmt.Sprintf("Tool execution was blocked: %s failed: %v", h.Name, err))
		}
		if d.Block {
			reason := d.Reason
			if reason == "" {
				reason = "Tool execution was blocked"
			}
			return Args{}, blockedResult(reason)
		}
		if d.Ask != "" {
			asks = append(asks, d.Ask)
		}
		if d.Input != nil {
			replaced, err := t.ValidateArgs(d.Input)
			if err != nil {
				return Args{}, blockedResult(fmt.Sprintf("%s (arguments as replaced by %s)", err.Error(), h.Name))
			}
			args = replaced
			if paths, blocked = preflightPaths(t, args, h.Name); blocked != nil {
				return Args{}, blocked
			}
		}
	}
	call := CallInfo{ID: callID, Name: t.Name(), Input: args.JSON, Paths: paths}
	if hooks.Permission != nil {
		d, err := hooks.Permission(ctx, call)
		switch {
		case err != nil:
			return Args{}, blockedResult(fmt.Sprintf("Blocked by permissions: %v", err))
		case d.Verdict == Deny:
			return Args{}, blockedResult("Blocked by permissions: " + d.describe())
		case d.Verdict == Ask:
			asks = append(asks, d.describe())
		}
	}
	if len(asks) == 0 {
		return args, nil
	}
	question := strings.Join(asks, "; ")
	if hooks.Approve == nil {
		return Args{}, blockedResult(fmt.Sprintf("needs approval: %s (run interactively, or pass --yes)", question))
	}
	ok, err := hooks.Approve(ctx, ApprovalRequest{Call: call, Questions: asks})
	switch {
	case err != nil:
		return Args{}, blockedResult(fmt.Sprintf("Tool execution was blocked: asking for approval failed (%s): %v", question, err))
	case !ok:
		return Args{}, blockedResult(fmt.Sprintf("Tool execution was blocked: the user did not approve it (%s)", question))
	}
	return args, nil
}

func blockedResult(msg string) *Result {
	r := ErrorResult(msg)
	return &r
}

// preflightPaths computes the paths hooks see; a tool that cannot name them
// is blocked (fail closed). replacedBy names the hook whose input this is.
func preflightPaths(t AgentTool, args Args, replacedBy string) ([]string, *Result) {
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

// Execute runs the tool with the arguments Preflight returned, turning a
// Go error or a panic into an error result, then chains the tool_result
// hooks.
func Execute(ctx context.Context, t AgentTool, hooks *Hooks, callID string, args Args, update UpdateFunc) Result {
	r := executeSafely(ctx, t, callID, args, update)
	if hooks == nil {
		return r
	}
	for _, h := range hooks.ToolResult {
		p, err := h.Func(ctx, CallInfo{ID: callID, Name: t.Name(), Input: args.JSON}, r)
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

func executeSafely(ctx context.Context, t AgentTool, callID string, args Args, update UpdateFunc) (r Result) {
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
