package abi

import "encoding/json"

// This file declares the host methods of ABI 1.1 (host_call), the guest's
// calls into pi: kv.*, http.request, tool.call, ui.* and session.*.

// Host methods of ABI 1.1 (host_call).
const (
	HostMethodKVGet          = "kv.get"
	HostMethodKVSet          = "kv.set"
	HostMethodKVDelete       = "kv.delete"
	HostMethodKVList         = "kv.list"
	HostMethodHTTP           = "http.request"
	HostMethodToolCall       = "tool.call"
	HostMethodNotify         = "ui.notify"
	HostMethodConfirm        = "ui.confirm"
	HostMethodSessionAppend  = "session.append"
	HostMethodSessionEntries = "session.entries"
)

// KV scopes.
const (
	ScopeProject = "project"
	ScopeGlobal  = "global"
)

// KVGetParams are kv.get's params.
type KVGetParams struct {
	// Key is non-empty UTF-8, at most 512 bytes.
	Key string `json:"key"`
	// Scope is ScopeProject (the default, when omitted) or ScopeGlobal.
	Scope string `json:"scope,omitempty"`
}

// KVGetResult is kv.get's result.
type KVGetResult struct {
	// Value is the stored JSON, null when the key is not set; always
	// present.
	Value json.RawMessage `json:"value"`
}

// KVSetParams are kv.set's params.
type KVSetParams struct {
	// Key is non-empty UTF-8, at most 512 bytes.
	Key string `json:"key"`
	// Value is any JSON; null deletes the key.
	Value json.RawMessage `json:"value"`
	// Scope is ScopeProject (omitted) or ScopeGlobal.
	Scope string `json:"scope,omitempty"`
}

// KVDeleteParams are kv.delete's params.
type KVDeleteParams struct {
	Key   string `json:"key"`
	Scope string `json:"scope,omitempty"`
}

// KVListParams are kv.list's params.
type KVListParams struct {
	// Prefix keeps the keys that start with it (omitted: all).
	Prefix string `json:"prefix,omitempty"`
	Scope  string `json:"scope,omitempty"`
}

// KVListResult is kv.list's result.
type KVListResult struct {
	// Keys are sorted; always present.
	Keys []string `json:"keys"`
}

// EmptyResult is the result of the host methods that answer {}.
type EmptyResult struct{}

// HTTPParams are http.request's params.
type HTTPParams struct {
	// Method is the HTTP method (omitted: GET).
	Method string `json:"method,omitempty"`
	// URL must match one of the extension's grants.http patterns.
	URL string `json:"url"`
	// Headers are request headers (omitted when none).
	Headers map[string]string `json:"headers,omitempty"`
	// Body is a UTF-8 request body (omitted when none).
	Body *string `json:"body,omitempty"`
	// BodyBase64 is a binary request body; never together with Body.
	BodyBase64 *string `json:"bodyBase64,omitempty"`
	// TimeoutMS ends the request after this many milliseconds (omitted:
	// the current call's deadline).
	TimeoutMS int64 `json:"timeoutMs,omitempty"`
}

// HTTPResult is http.request's result.
type HTTPResult struct {
	// Status is the HTTP status code.
	Status int `json:"status"`
	// Headers are the response headers, repeated ones joined with ", ";
	// always present.
	Headers map[string]string `json:"headers"`
	// Body is the body when it is UTF-8 (else omitted).
	Body *string `json:"body,omitempty"`
	// BodyBase64 is the body when it is not UTF-8 (else omitted).
	BodyBase64 *string `json:"bodyBase64,omitempty"`
}

// ToolCallHostParams are tool.call's params.
type ToolCallHostParams struct {
	// Name is a registered tool named in grants.tools.
	Name string `json:"name"`
	// Input are the arguments, an object (omitted: {}).
	Input json.RawMessage `json:"input,omitempty"`
}

// ToolCallHostResult is tool.call's result: the tool's result as the model
// would see it.
type ToolCallHostResult struct {
	// Content is always present.
	Content []Block `json:"content"`
	// Details are omitted when none.
	Details json.RawMessage `json:"details,omitempty"`
	// IsError is always present.
	IsError bool `json:"isError"`
}

// NotifyParams are ui.notify's params.
type NotifyParams struct {
	Message string `json:"message"`
	// Level is "info" (omitted), "warning" or "error".
	Level string `json:"level,omitempty"`
}

// ConfirmParams are ui.confirm's params.
type ConfirmParams struct {
	Title   string `json:"title"`
	Message string `json:"message"`
	// TimeoutMS gives up after this many milliseconds (omitted: the
	// current call's deadline).
	TimeoutMS int64 `json:"timeoutMs,omitempty"`
}

// ConfirmResult is ui.confirm's result.
type ConfirmResult struct {
	Confirmed bool `json:"confirmed"`
	// Reason says why Confirmed is false without a person's answer:
	// "no-ui" or "timeout" (omitted otherwise).
	Reason string `json:"reason,omitempty"`
}

// SessionAppendParams are session.append's params.
type SessionAppendParams struct {
	CustomType string          `json:"customType"`
	Data       json.RawMessage `json:"data"`
}

// SessionAppendResult is session.append's result.
type SessionAppendResult struct {
	ID string `json:"id"`
}

// SessionEntriesParams are session.entries' params.
type SessionEntriesParams struct {
	CustomType string `json:"customType,omitempty"`
}

// SessionEntry is one custom entry of the session.
type SessionEntry struct {
	ID         string          `json:"id"`
	CustomType string          `json:"customType"`
	Data       json.RawMessage `json:"data"`
}

// SessionEntriesResult is session.entries' result.
type SessionEntriesResult struct {
	Entries []SessionEntry `json:"entries"`
}
