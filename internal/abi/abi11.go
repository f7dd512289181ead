package abi

import "encoding/json"

// This file declares the additions of ABI 1.1 (docs/abi.md, "ABI 1.1"):
// the init facts, commands, the prompt and stop hooks, the ask answer, the
// new events and the host methods kv.*, http.request, tool.call, ui.* and
// session.*. Every addition is optional for a guest: the host sends nothing
// of it to a guest that did not ask for it, and a guest sends its 1.1
// result fields only when InitParams.ABIMinor >= 1.

// Minor is the ABI's minor version, sent as InitParams.ABIMinor.
const Minor = 1

// Methods of ABI 1.1 the host calls in the guest through pi_call.
const (
	MethodInput            = "hook.input"
	MethodBeforeAgentStart = "hook.before_agent_start"
	MethodStop             = "hook.stop"
	MethodCommand          = "command.execute"
)

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

// Hook names of ABI 1.1 a guest may list in InitResult.Hooks.
const (
	HookInput            = "input"
	HookBeforeAgentStart = "before_agent_start"
	HookStop             = "stop"
)

// Event types of ABI 1.1, sent only to guests that list them in
// InitResult.Events.
const (
	EventMessageEnd      = "message_end"
	EventSessionStart    = "session_start"
	EventSessionShutdown = "session_shutdown"
	EventCompactionStart = "compaction_start"
	EventCompactionEnd   = "compaction_end"
)

// DefaultEvents are the event types a guest with the "event" hook gets when
// its init names no Events: the six of ABI 1.0.
var DefaultEvents = []string{EventAgentStart, EventAgentEnd, EventTurnStart, EventTurnEnd, EventToolExecutionStart, EventToolExecutionEnd}

// IsEventType11 reports whether t is an event type a 1.1 guest may list in
// InitResult.Events: the six of 1.0 and those added in 1.1.
func IsEventType11(t string) bool {
	switch t {
	case EventMessageEnd, EventSessionStart, EventSessionShutdown, EventCompactionStart, EventCompactionEnd:
		return true
	}
	return IsEventType(t)
}

// Modes are the values of InitParams.Mode.
const (
	ModeInteractive = "interactive"
	ModePrint       = "print"
	ModeJSON        = "json"
	ModeRPC         = "rpc"
	ModeTool        = "tool"
	ModeInspect     = "inspect"
)

// CommandSpec declares one slash command in InitResult.Commands.
type CommandSpec struct {
	// Name is the command without its slash: [a-z][a-z0-9-]*.
	Name string `json:"name"`
	// Description is one line for /help.
	Description string `json:"description"`
	// ArgumentHint shows what the command takes ("<item>"), omitted when
	// empty.
	ArgumentHint string `json:"argumentHint,omitempty"`
}

// InputParams are the params of hook.input: text a person (or an RPC
// client, or pi -p) sent, before anything else sees it.
type InputParams struct {
	// Text is the prompt as typed (as replaced by earlier input hooks).
	Text string `json:"text"`
	// Images are attached images; always present ([] for none).
	Images []Block `json:"images"`
	// Mode is the run's mode (a Mode constant).
	Mode string `json:"mode"`
}

// InputResult is hook.input's result: {} passes, Text replaces the prompt,
// Handled keeps it from the model (Message is shown to the user).
type InputResult struct {
	// Text replaces the prompt (a pointer: "" is a replacement; omitted
	// when unchanged).
	Text *string `json:"text,omitempty"`
	// Handled means the prompt does not reach the model (omitted when
	// false).
	Handled bool `json:"handled,omitempty"`
	// Message is shown to the user when Handled (omitted when empty).
	Message string `json:"message,omitempty"`
}

// BeforeAgentStartParams are the params of hook.before_agent_start, sent
// once per prompt, after the input hooks.
type BeforeAgentStartParams struct {
	// Prompt is the user's prompt as it goes to the model.
	Prompt string `json:"prompt"`
	// SystemPrompt is the system prompt as the hooks before this one left
	// it.
	SystemPrompt string `json:"systemPrompt"`
}

// ContextMessage is a user-role message a before_agent_start hook adds
// before the prompt.
type ContextMessage struct {
	// Content is the message's content; always present.
	Content []Block `json:"content"`
}

// BeforeAgentStartResult is hook.before_agent_start's result; every field
// is omitted when empty, and {} changes nothing.
type BeforeAgentStartResult struct {
	// SystemPrompt replaces the system prompt for this prompt's run.
	SystemPrompt *string `json:"systemPrompt,omitempty"`
	// AppendSystemPrompt is added after it, with a blank line between.
	AppendSystemPrompt string `json:"appendSystemPrompt,omitempty"`
	// Messages are added as user-role context before the prompt.
	Messages []ContextMessage `json:"messages,omitempty"`
}

// StopParams are the params of hook.stop: the model ended a turn without
// tool calls and the run is about to end.
type StopParams struct {
	// Reason is "end_turn".
	Reason string `json:"reason"`
	// LastText is the text of the model's last message.
	LastText string `json:"lastText"`
	// Turns counts the run's turns, continues included.
	Turns int `json:"turns"`
}

// StopReasonEndTurn is StopParams.Reason.
const StopReasonEndTurn = "end_turn"

// StopResult is hook.stop's result: {} lets the run end; Continue with
// Message sends Message as a user message and the loop goes on.
type StopResult struct {
	// Continue keeps the run going (omitted when false).
	Continue bool `json:"continue,omitempty"`
	// Message is required with Continue (omitted when empty).
	Message string `json:"message,omitempty"`
}

// CommandParams are the params of command.execute: /NAME ARGS typed by the
// user.
type CommandParams struct {
	// Name is the command without its slash.
	Name string `json:"name"`
	// Args is the rest of the line after the name, trimmed.
	Args string `json:"args"`
}

// CommandResult is command.execute's result.
type CommandResult struct {
	// Text is shown to the user (omitted when empty).
	Text string `json:"text,omitempty"`
	// Prompt is sent to the model as the user's message (omitted when
	// empty).
	Prompt string `json:"prompt,omitempty"`
}

// MessageEndEvent is the params of an event of type message_end (assistant
// messages only).
type MessageEndEvent struct {
	// Type is EventMessageEnd.
	Type string `json:"type"`
	// Message is the assistant's message.
	Message EventMessage `json:"message"`
}

// EventMessage is a message as events carry it.
type EventMessage struct {
	// Role is "assistant".
	Role string `json:"role"`
	// Content is the message's content; always present.
	Content []Block `json:"content"`
	// ToolCalls are the calls it asks for (omitted when none).
	ToolCalls []EventToolCall `json:"toolCalls,omitempty"`
}

// EventToolCall is one tool call of an EventMessage.
type EventToolCall struct {
	// ID identifies the call.
	ID string `json:"id"`
	// Name is the tool.
	Name string `json:"name"`
	// Arguments is the argument text the model produced.
	Arguments string `json:"arguments"`
}

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
