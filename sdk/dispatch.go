package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
)

// abiVersion is the major version of the ABI this package implements.
const abiVersion = 1

type errorBody struct {
	Message string `json:"message"`
}

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
	case *initParams:
		result, err = r.init(p)
	case *executeParams:
		what = fmt.Sprintf("tool %q", p.ToolName)
		result, err = r.execute(p)
	case *ToolCall:
		what = "tool_call hook"
		result, err = r.hookToolCall(*p)
	case *ToolResult:
		what = "tool_result hook"
		result, err = r.hookToolResult(*p)
	case *BashSpawn:
		what = "bash_spawn hook"
		result, err = r.hookBashSpawn(*p)
	case *eventParams:
		what = "event handler"
		result, err = r.event(*p)
	default:
		err = fmt.Errorf("unknown method %q", method)
	}
	if err != nil {
		return encodeError(err)
	}
	b, err := json.Marshal(result)
	if err != nil {
		return encodeError(fmt.Errorf("encode answer to %s: %w", method, err))
	}
	out = make([]byte, 0, len(b)+len(okPrefix)+1)
	out = append(out, okPrefix...)
	out = append(out, b...)
	return append(out, '}')
}

const okPrefix = `{"ok":true,"result":`

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
	case "init":
		return new(initParams)
	case "tool.execute":
		return new(executeParams)
	case "hook.tool_call":
		return new(ToolCall)
	case "hook.tool_result":
		return new(ToolResult)
	case "hook.bash_spawn":
		return new(BashSpawn)
	case "event":
		return new(eventParams)
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

func encodeError(err error) []byte {
	b, _ := json.Marshal(struct {
		OK    bool      `json:"ok"`
		Error errorBody `json:"error"`
	}{false, errorBody{err.Error()}})
	return b
}

// wireBlock is a Block as written on the wire: a text block always has
// "text", an image block never has.
type wireBlock struct {
	Type     string  `json:"type"`
	Text     *string `json:"text,omitempty"`
	Data     string  `json:"data,omitempty"`
	MimeType string  `json:"mimeType,omitempty"`
}

func wireBlocks(bs []Block) []wireBlock {
	out := make([]wireBlock, len(bs))
	for i := range bs {
		if bs[i].Type == "image" {
			out[i] = wireBlock{Type: "image", Data: bs[i].Data, MimeType: bs[i].MimeType}
		} else {
			out[i] = wireBlock{Type: "text", Text: &bs[i].Text}
		}
	}
	return out
}

type wireResult struct {
	Content   []wireBlock `json:"content"`
	Details   any         `json:"details,omitempty"`
	IsError   bool        `json:"isError,omitempty"`
	Terminate bool        `json:"terminate,omitempty"`
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

func (r *registry) init(p *initParams) (any, error) {
	if r.name == "" && len(r.errs) == 0 {
		r.fail("sdk.Extension was not called (register in func init(): main is never run in a reactor)")
	}
	if len(r.errs) > 0 {
		return nil, fmt.Errorf("registration: %w", errors.Join(r.errs...))
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

func (r *registry) execute(p *executeParams) (any, error) {
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
	return wireResult{Content: wireBlocks(res.Content), Details: res.Details, IsError: res.IsError, Terminate: res.Terminate}, nil
}

func (r *registry) hookToolCall(c ToolCall) (any, error) {
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
			c.Paths = nil // they were the old input's; only the host can resolve the new one
		}
	}
	if replaced {
		return map[string]any{"input": c.Input}, nil
	}
	return struct{}{}, nil
}

func (r *registry) hookToolResult(res ToolResult) (any, error) {
	out := map[string]any{}
	for _, fn := range r.toolResult {
		p := fn(res)
		if p.Content != nil {
			res.Content = p.Content
			out["content"] = wireBlocks(p.Content)
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
	return s, nil
}

func (r *registry) event(p eventParams) (any, error) {
	raw := p.raw
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
