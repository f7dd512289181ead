package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/tool"
)

// hookName is how the pipeline names an extension's hook in messages.
func hookName(e *Extension) string { return "extension " + e.info.Name }

// Hooks returns the tool_call and tool_result hooks of the loaded extensions
// that declared them, in load order. A tool_call hook that faults, answers
// ok:false, or belongs to a disabled extension blocks the call (fail closed);
// a tool_result hook that does so is logged and leaves the result unchanged.
func (h *Host) Hooks() *tool.Hooks {
	hooks := &tool.Hooks{}
	for _, e := range h.Extensions() {
		if e.hookToolCall {
			hooks.ToolCall = append(hooks.ToolCall, tool.ToolCallHook{Name: hookName(e), Func: e.toolCallHook})
		}
		if e.hookToolResult {
			hooks.ToolResult = append(hooks.ToolResult, tool.ToolResultHook{Name: hookName(e), Func: e.toolResultHook})
		}
	}
	return hooks
}

// SpawnHooks returns the bash_spawn hooks of the loaded extensions that
// declared one, in load order. A failing hook stops the command (fail
// closed).
func (h *Host) SpawnHooks() []tool.SpawnHook {
	var out []tool.SpawnHook
	for _, e := range h.Extensions() {
		if e.hookBashSpawn {
			out = append(out, tool.SpawnHook{Name: hookName(e), Func: e.spawnHook})
		}
	}
	return out
}

// hookError turns an ok:false answer of a hook into an error that says so.
func (e *Extension) hookError(method string, err error) error {
	var ge *GuestError
	if errors.As(err, &ge) {
		return fmt.Errorf("extension %s: %s answered an error: %s", e.info.Name, method, ge.Message)
	}
	return err
}

func (e *Extension) toolCallHook(ctx context.Context, c tool.CallInfo) (tool.ToolCallDecision, error) {
	const method = abi.MethodToolCall
	if ownCall(ctx, e.name) {
		return tool.ToolCallDecision{}, nil // its own tool.call: skipped (ABI 1.1)
	}
	req, err := toolCallRequest(c)
	if err != nil {
		return tool.ToolCallDecision{}, err
	}
	var d tool.ToolCallDecision
	err = e.hookCall(ctx, method, req, func(raw json.RawMessage) error {
		var derr error
		d, derr = decodeToolCall(raw)
		return derr
	})
	if err != nil {
		return tool.ToolCallDecision{}, e.hookError(method, err)
	}
	if d.Block && d.Reason == "" {
		d.Reason = fmt.Sprintf("Tool execution was blocked by extension %s", e.info.Name)
	}
	return d, nil
}

func (e *Extension) toolResultHook(ctx context.Context, c tool.CallInfo, r tool.Result) (tool.ResultPatch, error) {
	const method = abi.MethodToolResult
	if ownCall(ctx, e.name) {
		return tool.ResultPatch{}, nil // its own tool.call: skipped (ABI 1.1)
	}
	req, err := toolResultRequest(c, r)
	if err != nil {
		return tool.ResultPatch{}, err
	}
	var p tool.ResultPatch
	err = e.hookCall(ctx, method, req, func(raw json.RawMessage) error {
		var derr error
		p, derr = decodeToolResult(raw)
		return derr
	})
	if err != nil {
		err = e.hookError(method, err)
		e.logger.Warn("tool_result hook failed; the result is unchanged", "tool", c.Name, "error", err.Error())
		return tool.ResultPatch{}, err
	}
	return p, nil
}

// spawnHook sends the guest the command, the directory and only the
// variables of the environment whose names are in its grants.env. Its answer
// is merged so that it can add or override any variable but never read, nor
// drop by leaving out, one it was not shown: an "env" in the answer replaces
// the visible part only (a granted name it leaves out is removed; the names
// it could not see are kept unless it sets them).
func (e *Extension) spawnHook(ctx context.Context, s tool.BashSpawn) (tool.BashSpawn, error) {
	const method = abi.MethodBashSpawn
	if ownCall(ctx, e.name) {
		return s, nil // a bash call it made with tool.call: skipped (ABI 1.1)
	}
	visible := make(map[string]string, len(e.grants.Env))
	for _, name := range e.grants.Env {
		if v, ok := s.Env[name]; ok {
			visible[name] = v
		}
	}
	shown := tool.BashSpawn{Command: s.Command, Cwd: s.Cwd, Env: visible}
	req, err := spawnRequest(shown)
	if err != nil {
		return s, err
	}
	var answer tool.BashSpawn
	err = e.hookCall(ctx, method, req, func(raw json.RawMessage) error {
		var derr error
		answer, derr = decodeSpawn(raw, shown)
		return derr
	})
	if err != nil {
		return s, e.hookError(method, err)
	}
	out := tool.BashSpawn{Command: answer.Command, Cwd: answer.Cwd, Env: s.Env}
	if !maps.Equal(answer.Env, visible) { // the hook left "env" as shown
		env := make(map[string]string, len(s.Env)+len(answer.Env))
		for k, v := range s.Env {
			if _, seen := visible[k]; !seen {
				env[k] = v
			}
		}
		for k, v := range answer.Env {
			env[k] = v
		}
		out.Env = env
	}
	return out, nil
}

// Event JSON-marshals ev (an object with a "type") and sends it to the
// extensions that declared the "event" hook and subscribed to its type (by
// default agent_start, agent_end, turn_start, turn_end,
// tool_execution_start, tool_execution_end; ABI 1.1 guests choose with
// init's "events"), in load order. message_end is sent for assistant
// messages only, as {"type", "message": {"role", "content", "toolCalls"?}}.
// Failures are logged under the extension's name and change nothing.
func (h *Host) Event(ctx context.Context, ev any) {
	req, typ, err := eventRequest(ev)
	if err != nil {
		h.logger.Warn("extension event: " + err.Error())
		return
	}
	if req == nil {
		return
	}
	for _, e := range h.Extensions() {
		if !e.hookEvent || !e.events[typ] || inChain(ctx, e.name) {
			continue
		}
		if err := e.call(ctx, abi.MethodEvent, req, e.hookTO, nil, nil); err != nil {
			e.logger.Warn("event failed", "type", typ, "error", e.hookError("event", err).Error())
		}
	}
}

// TakesEvent reports whether some loaded extension subscribed to events of
// type t, so a caller can skip preparing the others (it is asked for every
// streamed token, so it reads a set kept up to date by register).
func (h *Host) TakesEvent(t string) bool {
	m := h.subscribed.Load()
	return m != nil && (*m)[t]
}

// updateSubscribed rebuilds the set of subscribed event types. h.mu must
// be held.
func (h *Host) updateSubscribed() {
	m := map[string]bool{}
	for _, e := range h.exts {
		for t := range e.events {
			m[t] = true
		}
	}
	h.subscribed.Store(&m)
}
