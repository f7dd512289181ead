package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

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
	const method = "hook.tool_call"
	if len(c.Input) == 0 {
		c.Input = json.RawMessage("{}")
	}
	if c.Paths == nil {
		c.Paths = []string{} // always present: [] is "opens no paths it names"
	}
	req, err := encodeRequest(method, c)
	if err != nil {
		return tool.ToolCallDecision{}, err
	}
	var d tool.ToolCallDecision
	err = e.call(ctx, method, req, e.hookTO, nil, func(raw json.RawMessage) error {
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
	const method = "hook.tool_result"
	if len(c.Input) == 0 {
		c.Input = json.RawMessage("{}")
	}
	content := r.Content
	if content == nil {
		content = []tool.ContentBlock{}
	}
	req, err := encodeRequest(method, toolResultParams{
		ToolName: c.Name, ToolCallID: c.ID, Input: c.Input,
		Content: content, Details: r.Details, IsError: r.IsError,
	})
	if err != nil {
		return tool.ResultPatch{}, err
	}
	var p tool.ResultPatch
	err = e.call(ctx, method, req, e.hookTO, nil, func(raw json.RawMessage) error {
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

func (e *Extension) spawnHook(ctx context.Context, s tool.BashSpawn) (tool.BashSpawn, error) {
	const method = "hook.bash_spawn"
	if s.Env == nil {
		s.Env = map[string]string{}
	}
	req, err := encodeRequest(method, s)
	if err != nil {
		return s, err
	}
	out := s
	err = e.call(ctx, method, req, e.hookTO, nil, func(raw json.RawMessage) error {
		var derr error
		out, derr = decodeSpawn(raw, s)
		return derr
	})
	if err != nil {
		return s, e.hookError(method, err)
	}
	return out, nil
}

// eventTypes are the events sent to extensions with the "event" hook.
var eventTypes = map[string]bool{
	"agent_start": true, "agent_end": true,
	"turn_start": true, "turn_end": true,
	"tool_execution_start": true, "tool_execution_end": true,
}

// Event JSON-marshals ev (an object with a "type") and sends it to the
// extensions that declared the "event" hook, in load order. Only the ABI's
// event types are sent (agent_start, agent_end, turn_start, turn_end,
// tool_execution_start, tool_execution_end); others are dropped. Failures are
// logged under the extension's name and change nothing.
func (h *Host) Event(ctx context.Context, ev any) {
	raw, err := json.Marshal(ev)
	if err != nil {
		h.logger.Warn("extension event: cannot marshal event", "error", err.Error())
		return
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil || head.Type == "" {
		h.logger.Warn("extension event: not an object with a type", "event", string(raw))
		return
	}
	if !eventTypes[head.Type] {
		return
	}
	req, err := encodeRequest("event", json.RawMessage(raw))
	if err != nil {
		return
	}
	for _, e := range h.Extensions() {
		if !e.hookEvent {
			continue
		}
		if err := e.call(ctx, "event", req, e.hookTO, nil, nil); err != nil {
			e.logger.Warn("event failed", "type", head.Type, "error", e.hookError("event", err).Error())
		}
	}
}
