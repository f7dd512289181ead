package extensions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/tool"
)

// This file is the wire side of ABI v1: the envelopes and the strict
// decoding and checking of every answer. The messages are internal/abi's;
// wire.go maps them to and from runtime/tool values. Decoders never panic on
// any input (see FuzzDecodeResponse); a decoding failure of a guest's answer
// is a fault.

// GuestError is an `{"ok": false}` answer: the guest handled the request and
// reported a failure. It is not a fault.
type GuestError struct {
	Message string
}

func (e *GuestError) Error() string { return e.Message }

// requestParams are the params the host sends: internal/abi's types only
// (an event travels as its raw JSON), so no host type can reach the wire
// without wire.go's mapping.
type requestParams interface {
	abi.InitParams | abi.ExecuteParams | abi.ToolCallParams | abi.ToolResultParams | abi.BashSpawnParams | json.RawMessage |
		abi.InputParams | abi.BeforeAgentStartParams | abi.StopParams | abi.CommandParams | abi.MessageEndEvent |
		abi.ComponentRenderParams | abi.ComponentInputParams | abi.ComponentDisposeParams | abi.ToolRenderParams | abi.MessageRenderParams | abi.ShortcutParams
}

// encodeRequest marshals a request envelope.
func encodeRequest[P requestParams](method string, params P) ([]byte, error) {
	b, err := json.Marshal(abi.Request[P]{Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", method, err)
	}
	return b, nil
}

// decodeStrict decodes exactly one JSON value into v, refusing unknown
// fields and trailing data.
func decodeStrict(b []byte, v any) error { return abi.DecodeStrict(b, v) }

// decodeResponse checks an envelope. It returns the result of an ok answer,
// a *GuestError for an ok:false answer, or another error when the envelope is
// malformed (a fault).
func decodeResponse(b []byte) (json.RawMessage, error) {
	if len(b) == 0 {
		return nil, errors.New("empty response")
	}
	var r abi.Response
	if err := decodeStrict(b, &r); err != nil {
		return nil, fmt.Errorf("malformed response: %w; the answer began %s", err, quoteStart(b))
	}
	switch {
	case r.OK == nil:
		return nil, fmt.Errorf(`malformed response: no "ok" field; the answer began %s`, quoteStart(b))
	case *r.OK:
		if r.Error != nil {
			return nil, fmt.Errorf(`malformed response: "ok": true with an "error"; the answer began %s`, quoteStart(b))
		}
		return r.Result, nil
	default:
		if r.Error == nil {
			return nil, fmt.Errorf(`malformed response: "ok": false without an "error"; the answer began %s`, quoteStart(b))
		}
		return nil, &GuestError{Message: r.Error.Message}
	}
}

// encodeOK and encodeErr build host_call answers.
func encodeOK(result any) []byte {
	b, err := abi.EncodeOK(result)
	if err != nil {
		return encodeErr("encode result: " + err.Error())
	}
	return b
}

func encodeErr(msg string) []byte { return abi.EncodeError(msg) }

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// initRequest encodes the init request of an extension granted grants.
func initRequest(opts Options, config map[string]any, grants Grants) ([]byte, error) {
	p, err := initParams(opts, config, grants)
	if err == nil {
		p = initFacts(p, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("encode init request: %w", err)
	}
	return encodeRequest(abi.MethodInit, p)
}

// executeRequest encodes a tool.execute request.
func executeRequest(name string, call tool.Call, cwd string) ([]byte, error) {
	return encodeRequest(abi.MethodExecute, executeParams(name, call, cwd))
}

// toolCallRequest encodes a hook.tool_call request.
func toolCallRequest(c tool.CallInfo) ([]byte, error) {
	return encodeRequest(abi.MethodToolCall, toolCallParams(c))
}

// toolResultRequest encodes a hook.tool_result request.
func toolResultRequest(c tool.CallInfo, r tool.Result) ([]byte, error) {
	p, err := toolResultParams(c, r)
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", abi.MethodToolResult, err)
	}
	return encodeRequest(abi.MethodToolResult, p)
}

// spawnRequest encodes a hook.bash_spawn request.
func spawnRequest(s tool.BashSpawn) ([]byte, error) {
	return encodeRequest(abi.MethodBashSpawn, spawnParams(s))
}

// eventRequest encodes an event request from ev, which must marshal to an
// object with a "type". It returns a nil request (and no error) for a type
// that is not sent to extensions, and for a message_end of a message that
// is not the assistant's.
func eventRequest(ev any) (req []byte, typ string, err error) {
	raw, err := json.Marshal(ev)
	if err != nil {
		return nil, "", fmt.Errorf("cannot marshal event: %w", err)
	}
	var head abi.EventHead
	if err := json.Unmarshal(raw, &head); err != nil || head.Type == "" {
		return nil, "", fmt.Errorf("not an object with a type: %s", raw)
	}
	switch {
	case head.Type == abi.EventMessageEnd:
		p, ok, err := messageEndEvent(raw)
		if err != nil || !ok {
			return nil, head.Type, err
		}
		req, err = encodeRequest(abi.MethodEvent, p)
		return req, head.Type, err
	case !abi.IsEventType11(head.Type):
		return nil, head.Type, nil
	}
	req, err = encodeRequest(abi.MethodEvent, json.RawMessage(raw))
	return req, head.Type, err
}

// initResult is init's answer, decoded and checked.
type initResult struct {
	Name        string
	Version     string
	Description string
	Tools       []ToolSpec
	Hooks       []string
	Wants       *Grants
	// ABI 1.1.
	Commands     []CommandSpec
	ConfigSchema json.RawMessage
	Events       []string
	// ABI 1.2's UI.
	Shortcuts        []ShortcutSpec
	MessageRenderers []string
	// ABI 1.2 (flags.go).
	Flags    []FlagSpec
	Channels []string
}

// decodeInit decodes and validates init's result.
func decodeInit(raw json.RawMessage) (initResult, error) {
	var r abi.InitResult
	if !isObject(raw) {
		return initResult{}, errors.New("init result is not a JSON object")
	}
	if err := decodeStrict(raw, &r); err != nil {
		return initResult{}, fmt.Errorf("init result: %w", err)
	}
	if !extNameRE.MatchString(r.Name) {
		return initResult{}, fmt.Errorf("init result: name %q must match [a-z][a-z0-9_-]*", r.Name)
	}
	seen := map[string]bool{}
	for i, t := range r.Tools {
		if !toolNameRE.MatchString(t.Name) {
			return initResult{}, fmt.Errorf("init result: tools[%d]: name %q must match [a-zA-Z0-9_-]{1,64}", i, t.Name)
		}
		if seen[t.Name] {
			return initResult{}, fmt.Errorf("init result: tools[%d]: tool %q declared twice", i, t.Name)
		}
		seen[t.Name] = true
		if t.Description == "" {
			return initResult{}, fmt.Errorf("init result: tool %q: empty description", t.Name)
		}
		if !isObject(t.Parameters) {
			return initResult{}, fmt.Errorf("init result: tool %q: parameters must be a JSON Schema object", t.Name)
		}
		switch tool.ExecutionMode(t.ExecutionMode) {
		case "", tool.Parallel, tool.Sequential:
		default:
			return initResult{}, fmt.Errorf("init result: tool %q: executionMode %q must be parallel or sequential", t.Name, t.ExecutionMode)
		}
	}
	hooks := make([]string, 0, len(r.Hooks))
	for _, h := range r.Hooks {
		switch h {
		case HookToolCall, HookToolResult, HookBashSpawn, HookEvent, HookInput, HookBeforeAgentStart, HookStop:
		case abi.HookContext, abi.HookUserBash, abi.HookSessionBeforeSwitch, abi.HookSessionBeforeFork, abi.HookSessionBeforeCompact, abi.HookSessionBeforeTree, abi.HookBeforeProviderRequest:
		default:
			return initResult{}, fmt.Errorf("init result: unknown hook %q (known: tool_call, tool_result, bash_spawn, event, input, before_agent_start, stop, context, user_bash, session_before_switch, session_before_fork, session_before_compact, session_before_tree, before_provider_request)", h)
		}
		if !slices.Contains(hooks, h) {
			hooks = append(hooks, h)
		}
	}
	r.Hooks = hooks
	if err := checkInit11(r); err != nil {
		return initResult{}, fmt.Errorf("init result: %w", err)
	}
	if err := checkInitUI12(r); err != nil {
		return initResult{}, fmt.Errorf("init result: %w", err)
	}
	if err := checkInitRun12(r); err != nil {
		return initResult{}, fmt.Errorf("init result: %w", err)
	}
	return initFromABI(r), nil
}

func checkBlocks(blocks []tool.ContentBlock) error {
	for i, b := range blocks {
		switch b.Type {
		case "text":
			if b.Data != "" || b.MimeType != "" {
				return fmt.Errorf("content[%d]: a text block has no data or mimeType", i)
			}
		case "image":
			if b.Data == "" || b.MimeType == "" || b.Text != "" {
				return fmt.Errorf("content[%d]: an image block has data and mimeType and no text", i)
			}
		default:
			return fmt.Errorf("content[%d]: type %q must be text or image", i, b.Type)
		}
	}
	return nil
}

// decodeExecute turns tool.execute's answer into a tool.Result.
func decodeExecute(raw json.RawMessage) (tool.Result, error) {
	var r abi.ExecuteResult
	if !isObject(raw) {
		return tool.Result{}, errors.New("tool.execute result is not a JSON object")
	}
	if err := decodeStrict(raw, &r); err != nil {
		return tool.Result{}, fmt.Errorf("tool.execute result: %w", err)
	}
	res := resultFromABI(r)
	if err := checkBlocks(res.Content); err != nil {
		return tool.Result{}, fmt.Errorf("tool.execute result: %w", err)
	}
	return res, nil
}

// decodePartial turns what `emit` carries into a tool.Result.
func decodePartial(b []byte) (tool.Result, error) {
	var p abi.Partial
	if !isObject(b) {
		return tool.Result{}, errors.New("partial result is not a JSON object")
	}
	if err := decodeStrict(b, &p); err != nil {
		return tool.Result{}, fmt.Errorf("partial result: %w", err)
	}
	r := partialFromABI(p)
	if err := checkBlocks(r.Content); err != nil {
		return tool.Result{}, fmt.Errorf("partial result: %w", err)
	}
	return r, nil
}

// decodeToolCall turns hook.tool_call's answer into a decision.
func decodeToolCall(raw json.RawMessage) (tool.ToolCallDecision, error) {
	var r abi.ToolCallResult
	if isNull(raw) {
		return tool.ToolCallDecision{}, nil
	}
	if !isObject(raw) {
		return tool.ToolCallDecision{}, errors.New("hook.tool_call result is not a JSON object")
	}
	if err := decodeStrict(raw, &r); err != nil {
		return tool.ToolCallDecision{}, fmt.Errorf("hook.tool_call result: %w", err)
	}
	if !r.Block && !isNull(r.Input) && !isObject(r.Input) {
		return tool.ToolCallDecision{}, errors.New("hook.tool_call result: input must be a JSON object")
	}
	if r.Ask != "" && (r.Block || !isNull(r.Input)) {
		return tool.ToolCallDecision{}, errors.New("hook.tool_call result: ask goes alone (an answer is exactly one of {}, block, input, ask)")
	}
	return decisionFromABI(r), nil
}

// decodeToolResult turns hook.tool_result's answer into a patch.
func decodeToolResult(raw json.RawMessage) (tool.ResultPatch, error) {
	var r abi.ToolResultPatch
	if isNull(raw) {
		return tool.ResultPatch{}, nil
	}
	if !isObject(raw) {
		return tool.ResultPatch{}, errors.New("hook.tool_result result is not a JSON object")
	}
	if err := decodeStrict(raw, &r); err != nil {
		return tool.ResultPatch{}, fmt.Errorf("hook.tool_result result: %w", err)
	}
	p := patchFromABI(r)
	if err := checkBlocks(p.Content); err != nil {
		return tool.ResultPatch{}, fmt.Errorf("hook.tool_result result: %w", err)
	}
	return p, nil
}

// decodeSpawn applies hook.bash_spawn's answer to s; omitted fields keep
// their value.
func decodeSpawn(raw json.RawMessage, s tool.BashSpawn) (tool.BashSpawn, error) {
	var r abi.BashSpawnResult
	if isNull(raw) {
		return s, nil
	}
	if !isObject(raw) {
		return s, errors.New("hook.bash_spawn result is not a JSON object")
	}
	if err := decodeStrict(raw, &r); err != nil {
		return s, fmt.Errorf("hook.bash_spawn result: %w", err)
	}
	return spawnFromABI(r, s), nil
}

// decodeObject decodes a guest's result strictly; null is {}.
func decodeObject(raw json.RawMessage, method string, v any) error {
	if isNull(raw) {
		return nil
	}
	if !isObject(raw) {
		return fmt.Errorf("%s result is not a JSON object", method)
	}
	if err := decodeStrict(raw, v); err != nil {
		return fmt.Errorf("%s result: %w", method, err)
	}
	return nil
}
