package sdk

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/pi-go/pi/internal/abi"
)

// This file holds the host methods of ABI 1.1 a guest may call: kv,
// http.request, tool.call and ui (the 1.0 exec is in host.go).

// KV is a key-value store the host keeps for the extension, surviving
// faults, fresh instances and restarts: one per scope (ScopeProject, the
// zero value: this project; ScopeGlobal). Keys are 1 to 512 bytes of
// UTF-8; values any JSON; the host refuses a set past the extension's
// kv_mb quota.
type KV struct {
	// Scope is "" or "project" (this project's store) or "global".
	Scope string
}

// The kv scopes.
const (
	ScopeProject = abi.ScopeProject
	ScopeGlobal  = abi.ScopeGlobal
)

// ProjectKV and GlobalKV are the two stores.
var (
	ProjectKV = KV{Scope: ScopeProject}
	GlobalKV  = KV{Scope: ScopeGlobal}
)

// Get decodes key's value into v; found is false (and v untouched) when it
// is not set.
//
// # Errors
//
// A *HostError (an invalid key), or a value that does not fit v.
func (k KV) Get(key string, v any) (found bool, err error) {
	var res abi.KVGetResult
	if err := HostCall(abi.HostMethodKVGet, abi.KVGetParams{Key: key, Scope: k.Scope}, &res); err != nil {
		return false, err
	}
	if len(res.Value) == 0 || string(res.Value) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(res.Value, v); err != nil {
		return true, fmt.Errorf("kv %q: %w", key, err)
	}
	return true, nil
}

// Set stores v (as JSON) under key, durably before it returns; nil deletes
// the key.
//
// # Errors
//
// A *HostError ("kv quota exceeded (N of M bytes on disk)", an invalid key), or v
// that does not marshal.
func (k KV) Set(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("kv %q: %w", key, err)
	}
	return HostCall(abi.HostMethodKVSet, abi.KVSetParams{Key: key, Value: b, Scope: k.Scope}, nil)
}

// Delete removes key (nothing happens when it is not set).
//
// # Errors
//
// A *HostError (an invalid key).
func (k KV) Delete(key string) error {
	return HostCall(abi.HostMethodKVDelete, abi.KVDeleteParams{Key: key, Scope: k.Scope}, nil)
}

// List returns the keys that start with prefix, sorted.
//
// # Errors
//
// A *HostError.
func (k KV) List(prefix string) ([]string, error) {
	var res abi.KVListResult
	err := HostCall(abi.HostMethodKVList, abi.KVListParams{Prefix: prefix, Scope: k.Scope}, &res)
	return res.Keys, err
}

// HTTPRequest is a request the host makes for the extension.
type HTTPRequest struct {
	// Method defaults to GET.
	Method string
	// URL must match one of the extension's http grants.
	URL     string
	Headers map[string]string
	// Body is sent as is (as text when it is UTF-8, else base64 on the
	// wire).
	Body []byte
	// Timeout ends the request; 0 is the current call's deadline.
	Timeout time.Duration
}

// HTTPResponse is the host's answer.
type HTTPResponse struct {
	Status int
	// Headers hold each header once; repeated ones are joined with ", ".
	Headers map[string]string
	Body    []byte
}

// HTTP makes an HTTP request through the host (the guest has no sockets).
// The URL and every redirect must match the extension's http grants;
// bodies over 4 MiB are refused.
//
// # Errors
//
// A *HostError: "permission denied: extension NAME may not fetch URL
// (grants.http: ...)", "too many redirects", "response body over 4 MiB",
// or the network error.
func HTTP(req HTTPRequest) (HTTPResponse, error) {
	var res abi.HTTPResult
	if err := HostCall(abi.HostMethodHTTP, httpParamsToABI(req), &res); err != nil {
		return HTTPResponse{}, err
	}
	return httpResultFromABI(res)
}

// ToolCallResult is what CallTool returns: the tool's result as the model
// would see it (a blocked call is an error result with the reason).
type ToolCallResult struct {
	Content []Block
	Details json.RawMessage
	IsError bool
}

// Text returns the result's text blocks joined by newlines.
func (r ToolCallResult) Text() string { return ToolResult{Content: r.Content}.Text() }

// CallTool runs a tool (built in or another extension's) through the
// whole pipeline the model's calls take: validation, every other
// extension's tool_call hooks, the permission rules, the tool,
// tool_result hooks. The tool must be in the extension's tools grant; an
// extension cannot call its own tools; calls nest at most 3 deep; asks are
// answered as in a non-interactive run.
//
// # Errors
//
// A *HostError: "permission denied: extension NAME may not call tool ...",
// "extension NAME cannot call its own tool ...", "tool.call nested deeper
// than 3", an unknown tool. A blocked call is not an error: see IsError.
func CallTool(name string, input any) (ToolCallResult, error) {
	var raw json.RawMessage
	if input != nil {
		b, err := json.Marshal(input)
		if err != nil {
			return ToolCallResult{}, fmt.Errorf("tool.call %s: %w", name, err)
		}
		raw = b
	}
	var res abi.ToolCallHostResult
	if err := HostCall(abi.HostMethodToolCall, abi.ToolCallHostParams{Name: name, Input: raw}, &res); err != nil {
		return ToolCallResult{}, err
	}
	return ToolCallResult{Content: blocksFromABI(res.Content), Details: res.Details, IsError: res.IsError}, nil
}

// Notification levels.
const (
	NotifyInfo    = "info"
	NotifyWarning = "warning"
	NotifyError   = "error"
)

// Notify shows the person a message (level NotifyInfo, NotifyWarning or
// NotifyError; "" is info); without a person it is logged.
//
// # Errors
//
// A *HostError for a bad level.
func Notify(message, level string) error {
	return HostCall(abi.HostMethodNotify, abi.NotifyParams{Message: message, Level: level}, nil)
}

// ConfirmResult is the answer to Confirm: Reason is "no-ui" (nobody can
// answer) or "timeout" when Confirmed is false without a person's no.
type ConfirmResult struct {
	Confirmed bool
	Reason    string
}

// Confirm asks the person a yes/no question (default no). Without a person
// it answers at once {false, "no-ui"}; after timeout (0: the current
// call's deadline) {false, "timeout"}.
//
// # Errors
//
// A *HostError.
func Confirm(title, message string, timeout time.Duration) (ConfirmResult, error) {
	var res abi.ConfirmResult
	err := HostCall(abi.HostMethodConfirm, abi.ConfirmParams{Title: title, Message: message, TimeoutMS: timeout.Milliseconds()}, &res)
	return ConfirmResult{Confirmed: res.Confirmed, Reason: res.Reason}, err
}

// httpParamsToABI maps an HTTPRequest.
func httpParamsToABI(r HTTPRequest) abi.HTTPParams {
	p := abi.HTTPParams{Method: r.Method, URL: r.URL, Headers: r.Headers, TimeoutMS: r.Timeout.Milliseconds()}
	if r.Body != nil {
		if utf8.Valid(r.Body) {
			s := string(r.Body)
			p.Body = &s
		} else {
			s := base64.StdEncoding.EncodeToString(r.Body)
			p.BodyBase64 = &s
		}
	}
	return p
}

// httpResultFromABI maps http.request's result.
func httpResultFromABI(r abi.HTTPResult) (HTTPResponse, error) {
	out := HTTPResponse{Status: r.Status, Headers: r.Headers}
	switch {
	case r.Body != nil:
		out.Body = []byte(*r.Body)
	case r.BodyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*r.BodyBase64)
		if err != nil {
			return HTTPResponse{}, fmt.Errorf("http.request: bodyBase64: %w", err)
		}
		out.Body = b
	}
	return out, nil
}
