package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
)

// abiVersion is the major version of the ABI this package implements.
const abiVersion = 1

type request struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type response struct {
	OK     bool       `json:"ok"`
	Result any        `json:"result,omitempty"`
	Error  *errorBody `json:"error,omitempty"`
}

type errorBody struct {
	Message string `json:"message"`
}

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
	var q request
	if err := json.Unmarshal(req, &q); err != nil {
		return encodeError(fmt.Errorf("malformed request: %w", err))
	}
	what = "method " + q.Method
	var (
		result any
		err    error
	)
	switch q.Method {
	case "init":
		result, err = r.init(q.Params)
	case "tool.execute":
		result, err = r.execute(q.Params, &what)
	case "hook.tool_call":
		what = "tool_call hook"
		result, err = r.hookToolCall(q.Params)
	case "hook.tool_result":
		what = "tool_result hook"
		result, err = r.hookToolResult(q.Params)
	case "hook.bash_spawn":
		what = "bash_spawn hook"
		result, err = r.hookBashSpawn(q.Params)
	case "event":
		what = "event handler"
		result, err = r.event(q.Params)
	default:
		err = fmt.Errorf("unknown method %q", q.Method)
	}
	if err != nil {
		return encodeError(err)
	}
	b, err := json.Marshal(response{OK: true, Result: result})
	if err != nil {
		return encodeError(fmt.Errorf("encode answer to %s: %w", q.Method, err))
	}
	return b
}

func encodeError(err error) []byte {
	b, _ := json.Marshal(response{Error: &errorBody{Message: err.Error()}})
	return b
}

type initParams struct {
	ABI  int `json:"abi"`
	Host struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"host"`
	Cwd    string          `json:"cwd"`
	Config json.RawMessage `json:"config"`
	Grants Grants          `json:"grants"`
}

type toolSpecJSON struct {
	Name             string          `json:"name"`
	Label            string          `json:"label,omitempty"`
	Description      string          `json:"description"`
	Parameters       json.RawMessage `json:"parameters"`
	PromptSnippet    string          `json:"promptSnippet,omitempty"`
	PromptGuidelines []string        `json:"promptGuidelines,omitempty"`
	ExecutionMode    ExecutionMode   `json:"executionMode,omitempty"`
}

type initResult struct {
	Name        string         `json:"name"`
	Version     string         `json:"version"`
	Description string         `json:"description,omitempty"`
	Tools       []toolSpecJSON `json:"tools"`
	Hooks       []string       `json:"hooks"`
	Wants       *Grants        `json:"wants,omitempty"`
}

func (r *registry) init(raw json.RawMessage) (any, error) {
	if r.name == "" && len(r.errs) == 0 {
		r.fail("sdk.Extension was not called (register in func init(): main is never run in a reactor)")
	}
	if len(r.errs) > 0 {
		return nil, fmt.Errorf("registration: %w", errors.Join(r.errs...))
	}
	var p initParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("malformed init params: %w", err)
	}
	if p.ABI != 0 && p.ABI != abiVersion {
		return nil, fmt.Errorf("host speaks ABI %d, extension %q speaks ABI %d", p.ABI, r.name, abiVersion)
	}
	r.hostName, r.hostVersion = p.Host.Name, p.Host.Version
	r.cwd, r.config, r.grants = p.Cwd, p.Config, p.Grants
	r.initialized = true
	for _, fn := range r.onInit {
		if err := fn(); err != nil {
			return nil, err
		}
	}
	res := initResult{Name: r.name, Version: r.version, Description: r.description, Tools: []toolSpecJSON{}, Hooks: []string{}, Wants: r.wants}
	for _, t := range r.tools {
		res.Tools = append(res.Tools, toolSpecJSON{
			Name: t.spec.Name, Label: t.spec.Label, Description: t.spec.Description, Parameters: t.params,
			PromptSnippet: t.spec.PromptSnippet, PromptGuidelines: t.spec.PromptGuidelines, ExecutionMode: t.spec.ExecutionMode,
		})
	}
	if len(r.toolCall) > 0 {
		res.Hooks = append(res.Hooks, "tool_call")
	}
	if len(r.toolResult) > 0 {
		res.Hooks = append(res.Hooks, "tool_result")
	}
	if len(r.bashSpawn) > 0 {
		res.Hooks = append(res.Hooks, "bash_spawn")
	}
	if len(r.events) > 0 {
		res.Hooks = append(res.Hooks, "event")
	}
	return res, nil
}

type executeParams struct {
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`
	Cwd        string          `json:"cwd"`
}

func (r *registry) execute(raw json.RawMessage, what *string) (any, error) {
	var p executeParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("malformed tool.execute params: %w", err)
	}
	*what = fmt.Sprintf("tool %q", p.ToolName)
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
	if res.Content == nil {
		res.Content = []Block{}
	}
	return res, nil
}

func (r *registry) hookToolCall(raw json.RawMessage) (any, error) {
	var c ToolCall
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("malformed hook.tool_call params: %w", err)
	}
	replaced := false
	for _, fn := range r.toolCall {
		d := fn(c)
		if d.Block {
			return map[string]any{"block": true, "reason": d.Reason}, nil
		}
		if d.Input != nil {
			b, err := json.Marshal(d.Input)
			if err != nil {
				return nil, fmt.Errorf("encode replaced input of %s: %w", c.ToolName, err)
			}
			c.Input, replaced = b, true
		}
	}
	if replaced {
		return map[string]any{"input": c.Input}, nil
	}
	return struct{}{}, nil
}

func (r *registry) hookToolResult(raw json.RawMessage) (any, error) {
	var res ToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("malformed hook.tool_result params: %w", err)
	}
	out := map[string]any{}
	for _, fn := range r.toolResult {
		p := fn(res)
		if p.Content != nil {
			res.Content = p.Content
			out["content"] = p.Content
		}
		if p.Details != nil {
			b, err := json.Marshal(p.Details)
			if err != nil {
				return nil, fmt.Errorf("encode details patch of %s: %w", res.ToolName, err)
			}
			res.Details = b
			out["details"] = res.Details
		}
		if p.IsError != nil {
			res.IsError = *p.IsError
			out["isError"] = res.IsError
		}
	}
	return out, nil
}

func (r *registry) hookBashSpawn(raw json.RawMessage) (any, error) {
	var s BashSpawn
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("malformed hook.bash_spawn params: %w", err)
	}
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
	return s, nil
}

func (r *registry) event(raw json.RawMessage) (any, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("malformed event: %w", err)
	}
	for _, fn := range r.events {
		fn(Event{Type: head.Type, Raw: raw})
	}
	return struct{}{}, nil
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
