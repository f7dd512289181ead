package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/pi-go/pi/internal/abi"
)

// Guest code compiled to wasm runs encoding/json at a few MB/s, and every
// json.Unmarshal is two passes (validate, then decode), so the dispatch keeps
// passes over large payloads (tool input, results) to a minimum: the
// envelope is streamed and its params decoded straight into the method's
// type, and answers are written with plain structs (no json.Marshaler, whose
// output encoding/json would scan again).

// handle answers one request from the host. It never panics: a panic in a
// handler becomes an {"ok": false} answer with the panic's message. Requests
// are decoded leniently (a newer host may send more fields within ABI 1).
func (r *registry) handle(req []byte) (out []byte) {
	what := "request"
	defer func() {
		if p := recover(); p != nil {
			Logf(LevelError, "panic in %s: %v\n%s", what, p, debug.Stack())
			out = encodeError(fmt.Errorf("panic in %s: %v", what, p))
		}
	}()
	method, params, err := decodeRequest(req)
	if err != nil {
		return encodeError(err)
	}
	what = "method " + method
	var result any
	switch p := params.(type) {
	case *abi.InitParams:
		result, err = r.init(p)
	case *abi.ExecuteParams:
		what = fmt.Sprintf("tool %q", p.ToolName)
		result, err = r.execute(p)
	case *abi.ToolCallParams:
		what = "tool_call hook"
		result, err = r.hookToolCall(toolCallFromABI(p))
	case *abi.ToolResultParams:
		what = "tool_result hook"
		result, err = r.hookToolResult(toolResultFromABI(p))
	case *abi.BashSpawnParams:
		what = "bash_spawn hook"
		result, err = r.hookBashSpawn(bashSpawnFromABI(p))
	case *eventParams:
		what = "event handler"
		result, err = r.event(*p)
	case *abi.InputParams:
		what = "input hook"
		result, err = r.hookInput(p)
	case *abi.BeforeAgentStartParams:
		what = "before_agent_start hook"
		result, err = r.hookBeforeStart(p)
	case *abi.StopParams:
		what = "stop hook"
		result, err = r.hookStop(p)
	case *abi.CommandParams:
		what = fmt.Sprintf("command /%s", p.Name)
		result, err = r.command(p)
	case *abi.ComponentRenderParams:
		result, err = r.componentRender(p)
	case *abi.ComponentInputParams:
		result, err = r.componentInput(p)
	case *abi.ComponentDisposeParams:
		result, err = r.componentDispose(p)
	case *abi.ToolRenderParams:
		result, err = r.toolRender(p)
	case *abi.MessageRenderParams:
		result, err = r.messageRender(p)
	case *abi.ShortcutParams:
		what = "shortcut " + p.Key
		result, err = r.shortcut(p)
	case *abi.ContextParams, *abi.UserBashParams, *abi.SessionBeforeSwitchParams, *abi.SessionBeforeForkParams, *abi.SessionBeforeTreeParams, *abi.SessionBeforeCompactParams:
		result, what, _, err = r.handle12(p)
	case *run12Params:
		result, err = r.handleRun12(method, p)
	default:
		err = fmt.Errorf("unknown method %q", method)
	}
	if err != nil {
		return encodeError(err)
	}
	out, err = abi.EncodeOK(result)
	if err != nil {
		return encodeError(fmt.Errorf("encode answer to %s: %w", method, err))
	}
	return out
}

// eventParams keeps an event's JSON as it came.
type eventParams struct{ raw json.RawMessage }

func (e *eventParams) UnmarshalJSON(b []byte) error {
	e.raw = append(json.RawMessage(nil), b...)
	return nil
}

// paramsFor returns a pointer to the params type of a method; unknown
// methods get a raw value that is ignored.
func paramsFor(method string) any {
	switch method {
	case abi.MethodInit:
		return new(abi.InitParams)
	case abi.MethodExecute:
		return new(abi.ExecuteParams)
	case abi.MethodToolCall:
		return new(abi.ToolCallParams)
	case abi.MethodToolResult:
		return new(abi.ToolResultParams)
	case abi.MethodBashSpawn:
		return new(abi.BashSpawnParams)
	case abi.MethodEvent:
		return new(eventParams)
	case abi.MethodInput:
		return new(abi.InputParams)
	case abi.MethodBeforeAgentStart:
		return new(abi.BeforeAgentStartParams)
	case abi.MethodStop:
		return new(abi.StopParams)
	case abi.MethodCommand:
		return new(abi.CommandParams)
	case abi.MethodComponentRender:
		return new(abi.ComponentRenderParams)
	case abi.MethodComponentInput:
		return new(abi.ComponentInputParams)
	case abi.MethodComponentDispose:
		return new(abi.ComponentDisposeParams)
	case abi.MethodToolRender:
		return new(abi.ToolRenderParams)
	case abi.MethodMessageRender:
		return new(abi.MessageRenderParams)
	case abi.MethodShortcut:
		return new(abi.ShortcutParams)
	case abi.MethodTimerFire, abi.MethodWatchFire, abi.MethodBusMessage, abi.MethodBeforeProviderRequest:
		return new(run12Params)
	}
	if p := paramsFor12(method); p != nil {
		return p
	}
	return new(json.RawMessage)
}

// decodeRequest reads {"method", "params"} in one pass when the method comes
// first (as the host writes it), and in two otherwise.
func decodeRequest(req []byte) (method string, params any, err error) {
	malformed := func(err error) (string, any, error) {
		return "", nil, fmt.Errorf("malformed request: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(req))
	if tok, err := dec.Token(); err != nil {
		return malformed(err)
	} else if tok != json.Delim('{') {
		return malformed(fmt.Errorf("want an object, got %v", tok))
	}
	var raw json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return malformed(err)
		}
		switch tok {
		case "method":
			if err := dec.Decode(&method); err != nil {
				return malformed(fmt.Errorf("method: %w", err))
			}
		case "params":
			if method == "" {
				err = dec.Decode(&raw)
			} else {
				params = paramsFor(method)
				err = dec.Decode(params)
			}
			if err != nil {
				return malformed(fmt.Errorf("params of %s: %w", method, err))
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return malformed(err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return malformed(err)
	}
	if dec.More() {
		return malformed(errors.New("data after the request"))
	}
	if params == nil {
		params = paramsFor(method)
		if len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, params); err != nil {
				return malformed(fmt.Errorf("params of %s: %w", method, err))
			}
		}
	}
	return method, params, nil
}

func encodeError(err error) []byte { return abi.EncodeError(err.Error()) }

func (r *registry) init(p *abi.InitParams) (any, error) {
	if r.name == "" && len(r.errs) == 0 {
		r.fail("sdk.Extension was not called (register in func init(): main is never run in a reactor)")
	}
	if len(r.errs) > 0 {
		return nil, fmt.Errorf("registration: %w", errors.Join(r.errs...))
	}
	if p.ABI != 0 && p.ABI != abi.Version {
		return nil, fmt.Errorf("host speaks ABI %d, extension %q speaks ABI %d", p.ABI, r.name, abi.Version)
	}
	r.hostName, r.hostVersion = p.Host.Name, p.Host.Version
	r.cwd, r.config, r.grants = p.Cwd, p.Config, grantsFromABI(p.Grants)
	r.abiMinor, r.projectRoot, r.trusted, r.mode, r.hasUI = p.ABIMinor, p.ProjectRoot, p.Trusted, p.Mode, p.HasUI
	r.initialized = true
	r.ui12.tui = p.TUI
	for _, fn := range r.onInit {
		if err := fn(); err != nil {
			return nil, err
		}
	}
	return r.initResult(), nil
}

func (r *registry) execute(p *abi.ExecuteParams) (any, error) {
	var t *toolEntry
	for _, e := range r.tools {
		if e.spec.Name == p.ToolName {
			t = e
		}
	}
	if t == nil {
		return nil, fmt.Errorf("extension %q has no tool %q", r.name, p.ToolName)
	}
	cwd := p.Cwd
	if cwd == "" {
		cwd = r.cwd
	}
	res, err := t.run(&Context{ToolName: p.ToolName, ToolCallID: p.ToolCallID, Cwd: cwd}, p.Input)
	if err != nil {
		return nil, err
	}
	out, err := resultToABI(res)
	if err != nil {
		return nil, fmt.Errorf("encode answer to %s: %w", abi.MethodExecute, err)
	}
	return out, nil
}

func (r *registry) hookToolCall(c ToolCall) (any, error) {
	replaced := false
	var asks []string
	for _, fn := range r.toolCall {
		d := fn(c)
		if d.Block {
			return abi.ToolCallResult{Block: true, Reason: d.Reason}, nil
		}
		if d.Ask != "" {
			asks = append(asks, d.Ask)
		}
		if d.Input != nil {
			b, err := json.Marshal(d.Input)
			if err != nil {
				return nil, fmt.Errorf("encode replaced input of %s: %w", c.ToolName, err)
			}
			c.Input, replaced = b, true
			c.Paths = nil // they were the old input's; only the host can resolve the new one
		}
	}
	if len(asks) > 0 {
		q := strings.Join(asks, "; ")
		switch {
		case replaced:
			// An answer is one of block, input, ask: dropping the new
			// arguments could run the call as it was, so block instead.
			return abi.ToolCallResult{Block: true, Reason: fmt.Sprintf("Tool execution was blocked: extension %s both replaced the arguments and asked (%s); it cannot do both", r.name, q)}, nil
		case r.abiMinor < 1:
			return abi.ToolCallResult{Block: true, Reason: fmt.Sprintf("needs approval: %s (this pi cannot ask: it speaks extension ABI 1.0)", q)}, nil
		}
		return abi.ToolCallResult{Ask: q}, nil
	}
	if replaced {
		return abi.ToolCallResult{Input: c.Input}, nil
	}
	return abi.ToolCallResult{}, nil
}

func (r *registry) hookToolResult(res ToolResult) (any, error) {
	var out abi.ToolResultPatch
	for _, fn := range r.toolResult {
		p := fn(res)
		if p.Content != nil {
			res.Content = p.Content
			content := blocksToABI(p.Content)
			out.Content = &content
		}
		if p.Details != nil {
			b, err := json.Marshal(p.Details)
			if err != nil {
				return nil, fmt.Errorf("encode details patch of %s: %w", res.ToolName, err)
			}
			res.Details = b
			out.Details = res.Details
		}
		if p.IsError != nil {
			res.IsError = *p.IsError
			isError := res.IsError
			out.IsError = &isError
		}
	}
	return out, nil
}

func (r *registry) hookBashSpawn(s BashSpawn) (any, error) {
	for _, fn := range r.bashSpawn {
		n := fn(s)
		if n.Command != "" {
			s.Command = n.Command
		}
		if n.Cwd != "" {
			s.Cwd = n.Cwd
		}
		if n.Env != nil {
			s.Env = n.Env
		}
	}
	return bashSpawnToABI(s), nil
}

func (r *registry) event(p eventParams) (any, error) {
	raw := p.raw
	var head abi.EventHead
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("malformed event: %w", err)
	}
	for _, fn := range r.events {
		fn(Event{Type: head.Type, Raw: raw})
	}
	return abi.EventResult{}, nil
}

// describeDecodeError turns an encoding/json error into a short message that
// names the field.
func describeDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return fmt.Sprintf("must be %s (got %s)", jsonKind(te.Type), te.Value)
		}
		return fmt.Sprintf("field %q must be %s (got %s)", field, jsonKind(te.Type), te.Value)
	case errors.As(err, &se):
		return "not valid JSON: " + se.Error()
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}
