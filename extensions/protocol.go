package extensions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/pi-go/pi/runtime/tool"
)

// This file is the wire side of ABI v1: the request/response envelope and the
// strict decoding of every result. Decoders never panic on any input (see
// FuzzDecodeResponse); a decoding failure of a guest's answer is a fault.

// request is the envelope the host sends to pi_call.
type request struct {
	Method string `json:"method"`
	Params any    `json:"params"`
}

// wireError is the error half of an envelope.
type wireError struct {
	Message string `json:"message"`
}

// response is the envelope a guest (or the host, for host_call) answers with.
type response struct {
	OK     *bool           `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *wireError      `json:"error,omitempty"`
}

// GuestError is an `{"ok": false}` answer: the guest handled the request and
// reported a failure. It is not a fault.
type GuestError struct {
	Message string
}

func (e *GuestError) Error() string { return e.Message }

// encodeRequest marshals a request envelope.
func encodeRequest(method string, params any) ([]byte, error) {
	b, err := json.Marshal(request{Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", method, err)
	}
	return b, nil
}

// decodeStrict decodes exactly one JSON value into v, refusing unknown
// fields and trailing data.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// decodeResponse checks an envelope. It returns the result of an ok answer,
// a *GuestError for an ok:false answer, or another error when the envelope is
// malformed (a fault).
func decodeResponse(b []byte) (json.RawMessage, error) {
	if len(b) == 0 {
		return nil, errors.New("empty response")
	}
	var r response
	if err := decodeStrict(b, &r); err != nil {
		return nil, fmt.Errorf("malformed response: %w", err)
	}
	switch {
	case r.OK == nil:
		return nil, errors.New(`malformed response: no "ok" field`)
	case *r.OK:
		if r.Error != nil {
			return nil, errors.New(`malformed response: "ok": true with an "error"`)
		}
		return r.Result, nil
	default:
		if r.Error == nil {
			return nil, errors.New(`malformed response: "ok": false without an "error"`)
		}
		return nil, &GuestError{Message: r.Error.Message}
	}
}

// encodeOK and encodeErr build host_call answers.
func encodeOK(result any) []byte {
	raw, err := json.Marshal(result)
	if err != nil {
		return encodeErr("encode result: " + err.Error())
	}
	b, _ := json.Marshal(response{OK: ptr(true), Result: raw})
	return b
}

func encodeErr(msg string) []byte {
	b, _ := json.Marshal(response{OK: ptr(false), Error: &wireError{Message: msg}})
	return b
}

func ptr[T any](v T) *T { return &v }

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

// initParams are sent with `init`.
type initParams struct {
	ABI    int            `json:"abi"`
	Host   hostInfo       `json:"host"`
	Cwd    string         `json:"cwd"`
	Config map[string]any `json:"config"`
	Grants Grants         `json:"grants"`
}

type hostInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// initResult is init's answer.
type initResult struct {
	Name        string     `json:"name"`
	Version     string     `json:"version"`
	Description string     `json:"description,omitempty"`
	Tools       []ToolSpec `json:"tools"`
	Hooks       []string   `json:"hooks"`
	Wants       *Grants    `json:"wants,omitempty"`
}

// decodeInit decodes and validates init's result.
func decodeInit(raw json.RawMessage) (initResult, error) {
	var r initResult
	if !isObject(raw) {
		return r, errors.New("init result is not a JSON object")
	}
	if err := decodeStrict(raw, &r); err != nil {
		return r, fmt.Errorf("init result: %w", err)
	}
	if !extNameRE.MatchString(r.Name) {
		return r, fmt.Errorf("init result: name %q must match [a-z][a-z0-9_-]*", r.Name)
	}
	seen := map[string]bool{}
	for i, t := range r.Tools {
		if !toolNameRE.MatchString(t.Name) {
			return r, fmt.Errorf("init result: tools[%d]: name %q must match [a-zA-Z0-9_-]{1,64}", i, t.Name)
		}
		if seen[t.Name] {
			return r, fmt.Errorf("init result: tools[%d]: tool %q declared twice", i, t.Name)
		}
		seen[t.Name] = true
		if t.Description == "" {
			return r, fmt.Errorf("init result: tool %q: empty description", t.Name)
		}
		if !isObject(t.Parameters) {
			return r, fmt.Errorf("init result: tool %q: parameters must be a JSON Schema object", t.Name)
		}
		switch tool.ExecutionMode(t.ExecutionMode) {
		case "", tool.Parallel, tool.Sequential:
		default:
			return r, fmt.Errorf("init result: tool %q: executionMode %q must be parallel or sequential", t.Name, t.ExecutionMode)
		}
	}
	hooks := make([]string, 0, len(r.Hooks))
	for _, h := range r.Hooks {
		switch h {
		case HookToolCall, HookToolResult, HookBashSpawn, HookEvent:
		default:
			return r, fmt.Errorf("init result: unknown hook %q (known: tool_call, tool_result, bash_spawn, event)", h)
		}
		if !slices.Contains(hooks, h) {
			hooks = append(hooks, h)
		}
	}
	r.Hooks = hooks
	if r.Tools == nil {
		r.Tools = []ToolSpec{}
	}
	return r, nil
}

// executeParams are sent with `tool.execute`.
type executeParams struct {
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`
	Cwd        string          `json:"cwd"`
}

// executeResult is tool.execute's answer.
type executeResult struct {
	Content   []tool.ContentBlock `json:"content"`
	Details   json.RawMessage     `json:"details,omitempty"`
	IsError   bool                `json:"isError,omitempty"`
	Terminate bool                `json:"terminate,omitempty"`
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
	var r executeResult
	if !isObject(raw) {
		return tool.Result{}, errors.New("tool.execute result is not a JSON object")
	}
	if err := decodeStrict(raw, &r); err != nil {
		return tool.Result{}, fmt.Errorf("tool.execute result: %w", err)
	}
	if err := checkBlocks(r.Content); err != nil {
		return tool.Result{}, fmt.Errorf("tool.execute result: %w", err)
	}
	res := tool.Result{Content: r.Content, IsError: r.IsError, Terminate: r.Terminate}
	if res.Content == nil {
		res.Content = []tool.ContentBlock{}
	}
	if !isNull(r.Details) {
		res.Details = r.Details
	}
	return res, nil
}

// partial is what `emit` carries.
type partial struct {
	Content []tool.ContentBlock `json:"content"`
	Details json.RawMessage     `json:"details,omitempty"`
}

func decodePartial(b []byte) (tool.Result, error) {
	var p partial
	if !isObject(b) {
		return tool.Result{}, errors.New("partial result is not a JSON object")
	}
	if err := decodeStrict(b, &p); err != nil {
		return tool.Result{}, fmt.Errorf("partial result: %w", err)
	}
	if err := checkBlocks(p.Content); err != nil {
		return tool.Result{}, fmt.Errorf("partial result: %w", err)
	}
	r := tool.Result{Content: p.Content}
	if r.Content == nil {
		r.Content = []tool.ContentBlock{}
	}
	if !isNull(p.Details) {
		r.Details = p.Details
	}
	return r, nil
}

// toolCallResult is hook.tool_call's answer.
type toolCallResult struct {
	Block  bool            `json:"block,omitempty"`
	Reason string          `json:"reason,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
}

func decodeToolCall(raw json.RawMessage) (tool.ToolCallDecision, error) {
	var r toolCallResult
	if isNull(raw) {
		return tool.ToolCallDecision{}, nil
	}
	if !isObject(raw) {
		return tool.ToolCallDecision{}, errors.New("hook.tool_call result is not a JSON object")
	}
	if err := decodeStrict(raw, &r); err != nil {
		return tool.ToolCallDecision{}, fmt.Errorf("hook.tool_call result: %w", err)
	}
	d := tool.ToolCallDecision{Block: r.Block, Reason: r.Reason}
	if !r.Block && !isNull(r.Input) {
		if !isObject(r.Input) {
			return tool.ToolCallDecision{}, errors.New("hook.tool_call result: input must be a JSON object")
		}
		d.Input = bytes.TrimSpace(r.Input)
	}
	return d, nil
}

// toolResultParams are sent with `hook.tool_result`.
type toolResultParams struct {
	ToolName   string              `json:"toolName"`
	ToolCallID string              `json:"toolCallId"`
	Input      json.RawMessage     `json:"input"`
	Content    []tool.ContentBlock `json:"content"`
	Details    any                 `json:"details"`
	IsError    bool                `json:"isError"`
}

// toolResultPatch is hook.tool_result's answer.
type toolResultPatch struct {
	Content *[]tool.ContentBlock `json:"content,omitempty"`
	Details json.RawMessage      `json:"details,omitempty"`
	IsError *bool                `json:"isError,omitempty"`
}

func decodeToolResult(raw json.RawMessage) (tool.ResultPatch, error) {
	var r toolResultPatch
	if isNull(raw) {
		return tool.ResultPatch{}, nil
	}
	if !isObject(raw) {
		return tool.ResultPatch{}, errors.New("hook.tool_result result is not a JSON object")
	}
	if err := decodeStrict(raw, &r); err != nil {
		return tool.ResultPatch{}, fmt.Errorf("hook.tool_result result: %w", err)
	}
	p := tool.ResultPatch{IsError: r.IsError}
	if r.Content != nil {
		if err := checkBlocks(*r.Content); err != nil {
			return tool.ResultPatch{}, fmt.Errorf("hook.tool_result result: %w", err)
		}
		p.Content = *r.Content
		if p.Content == nil {
			p.Content = []tool.ContentBlock{}
		}
	}
	if len(r.Details) > 0 {
		p.Details = bytes.TrimSpace(r.Details)
	}
	return p, nil
}

// spawnPatch is hook.bash_spawn's answer; omitted fields keep their value.
type spawnPatch struct {
	Command *string            `json:"command,omitempty"`
	Cwd     *string            `json:"cwd,omitempty"`
	Env     *map[string]string `json:"env,omitempty"`
}

func decodeSpawn(raw json.RawMessage, s tool.BashSpawn) (tool.BashSpawn, error) {
	var r spawnPatch
	if isNull(raw) {
		return s, nil
	}
	if !isObject(raw) {
		return s, errors.New("hook.bash_spawn result is not a JSON object")
	}
	if err := decodeStrict(raw, &r); err != nil {
		return s, fmt.Errorf("hook.bash_spawn result: %w", err)
	}
	if r.Command != nil {
		s.Command = *r.Command
	}
	if r.Cwd != nil {
		s.Cwd = *r.Cwd
	}
	if r.Env != nil && *r.Env != nil {
		s.Env = *r.Env
	}
	return s, nil
}

// execParams are the params of the `exec` host method.
type execParams struct {
	Argv      []string `json:"argv"`
	Cwd       string   `json:"cwd,omitempty"`
	TimeoutMS int      `json:"timeoutMs,omitempty"`
	Stdin     string   `json:"stdin,omitempty"`
}

type execResult struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exitCode"`
}

// hostRequest is a guest's host_call envelope; params stay raw until the
// method is known.
type hostRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}
