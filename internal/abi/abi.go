// Package abi declares the JSON messages of the extension ABI, version 1:
// the request and response envelopes and the params and result of every
// method, host to guest (pi_call) and guest to host (host_call, emit). It is
// the one Go declaration of the wire format, shared by the host (package
// extensions) and the Go guest SDK (package sdk); both map their own types
// to and from these at their edge and encode nothing else onto the wire.
//
// docs/abi.md is the prose contract; testdata/*.json holds one example of
// every message, exactly as the encoders of both sides write it (indented
// here for reading; on the wire it is compact). The package uses the
// standard library only and builds for GOOS=wasip1 GOARCH=wasm.
//
// Field names are camelCase. Where the comments say "always present", the
// field is written even when empty ([] or "" or false, never left out);
// "omitted when empty" fields are left out by the encoder, and a decoder
// treats a missing field and null alike.
package abi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Version is the ABI's major version, sent as InitParams.ABI and named by
// the module's marker export pi_abi_v1.
const Version = 1

// Methods the host calls in the guest through pi_call.
const (
	MethodInit       = "init"
	MethodExecute    = "tool.execute"
	MethodToolCall   = "hook.tool_call"
	MethodToolResult = "hook.tool_result"
	MethodBashSpawn  = "hook.bash_spawn"
	MethodEvent      = "event"
)

// Methods the guest calls in the host through host_call (1.1 adds the
// HostMethod constants of hostmethods.go).
const (
	HostMethodExec = "exec"
)

// Hook names a guest may list in InitResult.Hooks (1.1 adds HookInput,
// HookBeforeAgentStart and HookStop).
const (
	HookToolCall   = "tool_call"
	HookToolResult = "tool_result"
	HookBashSpawn  = "bash_spawn"
	HookEvent      = "event"
)

// Event types the host sends with MethodEvent.
const (
	EventAgentStart         = "agent_start"
	EventAgentEnd           = "agent_end"
	EventTurnStart          = "turn_start"
	EventTurnEnd            = "turn_end"
	EventToolExecutionStart = "tool_execution_start"
	EventToolExecutionEnd   = "tool_execution_end"
)

// IsEventType reports whether t is one of the event types sent to guests.
func IsEventType(t string) bool {
	switch t {
	case EventAgentStart, EventAgentEnd, EventTurnStart, EventTurnEnd, EventToolExecutionStart, EventToolExecutionEnd:
		return true
	}
	return false
}

// Request is the envelope of one call: {"method", "params"}. The host sends
// it to pi_call; a guest sends it to host_call. P is the method's params
// type (json.RawMessage while the method is not known yet).
type Request[P any] struct {
	// Method names the call: one of the Method or HostMethod constants.
	Method string `json:"method"`
	// Params are the method's params, always present (null when a method
	// has none).
	Params P `json:"params"`
}

// Response is the envelope of every answer: {"ok": true, "result"} or
// {"ok": false, "error": {"message"}}. An ok:false answer is a proper
// answer (the call failed), not a fault.
type Response struct {
	// OK is required: true with a result, false with an error.
	OK *bool `json:"ok"`
	// Result is the method's result when OK (omitted when empty).
	Result json.RawMessage `json:"result,omitempty"`
	// Error says why the call failed when not OK.
	Error *Error `json:"error,omitempty"`
}

// Error is the error half of a Response.
type Error struct {
	// Message is one line for a person: why the call failed.
	Message string `json:"message"`
}

// okPrefix is how every ok answer begins; EncodeOK appends the result and
// the closing brace (the same bytes as encoding a Response, one encoding
// pass over the result fewer).
const okPrefix = `{"ok":true,"result":`

// EncodeOK returns the answer {"ok": true, "result": result}.
//
// # Errors
//
// EncodeOK fails when result does not marshal.
func EncodeOK(result any) ([]byte, error) {
	b, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(okPrefix)+len(b)+1)
	out = append(out, okPrefix...)
	out = append(out, b...)
	return append(out, '}'), nil
}

// EncodeError returns the answer {"ok": false, "error": {"message": msg}}.
func EncodeError(msg string) []byte {
	ok := false
	b, _ := json.Marshal(Response{OK: &ok, Error: &Error{Message: msg}}) // cannot fail: strings only
	return b
}

// DecodeStrict decodes exactly one JSON value from b into v: an unknown
// field, a wrong type or anything after the value (other than white space)
// is an error. The host decodes every guest answer this way; a failure is
// a malformed answer, which is a fault.
//
// # Errors
//
// DecodeStrict fails with encoding/json's error, or with an error saying
// there is data after the value.
func DecodeStrict(b []byte, v any) error {
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

// HostInfo names the host in InitParams.
type HostInfo struct {
	// Name is the host program ("pi").
	Name string `json:"name"`
	// Version is its version ("" when unknown); always present.
	Version string `json:"version"`
}

// Grants are what an extension may touch (InitParams.Grants), or what it
// asks for (InitResult.Wants). Every list is always present; null when the
// host has no list to give.
type Grants struct {
	// FS entries are "ro:PATH" or "rw:PATH". In InitParams PATH is the real
	// absolute path the directory is mounted at inside the sandbox; in
	// Wants it is as the extension writes it (relative to the project).
	FS []string `json:"fs"`
	// Exec entries are command patterns the exec host method allows.
	Exec []string `json:"exec"`
	// Env entries are names of environment variables the guest can read.
	Env []string `json:"env"`
	// HTTP entries are URL patterns the http.request host method allows
	// (ABI 1.1; omitted when empty).
	HTTP []string `json:"http,omitempty"`
	// Tools are names of tools the tool.call host method may run (ABI 1.1;
	// omitted when empty).
	Tools []string `json:"tools,omitempty"`
	// LLM allows llm.complete (ABI 1.2; omitted when false).
	LLM bool `json:"llm,omitempty"`
	// Model allows model.set, model.setThinkingLevel and replacing the
	// provider request (ABI 1.2; omitted when false).
	Model bool `json:"model,omitempty"`
}

// InitParams are the params of init, sent once per instance before any
// other call.
type InitParams struct {
	// ABI is Version.
	ABI int `json:"abi"`
	// Host names the host.
	Host HostInfo `json:"host"`
	// Cwd is the host's working directory.
	Cwd string `json:"cwd"`
	// Config is the extension's [extensions.config] table, {} when none.
	Config json.RawMessage `json:"config"`
	// Grants are what the host granted, fs entries resolved to real paths.
	Grants Grants `json:"grants"`
	// ABIMinor is Minor (ABI 1.1; a 1.0 host does not send it, which reads
	// as 0). A guest sends 1.1 result fields only when it is >= 1.
	ABIMinor int `json:"abiMinor"`
	// ProjectRoot is the folder whose pi.toml applies, or the working
	// directory when none does (1.1).
	ProjectRoot string `json:"projectRoot"`
	// Trusted says the project's pi.toml is trusted, or trusted for this
	// run (1.1).
	Trusted bool `json:"trusted"`
	// Mode is how pi runs: a Mode constant (1.1).
	Mode string `json:"mode"`
	// HasUI says a person can answer ui.confirm (1.1).
	HasUI bool `json:"hasUI"`
	// TUI says pi's terminal UI runs: components, shortcuts and
	// renderers show (1.2).
	TUI bool `json:"tui"`
}

// ToolSpec declares one tool in InitResult.
type ToolSpec struct {
	// Name matches [a-zA-Z0-9_-]{1,64}, unique within the extension.
	Name string `json:"name"`
	// Label is a short title for the UI (omitted when empty: the name).
	Label string `json:"label,omitempty"`
	// Description tells the model what the tool does; not empty.
	Description string `json:"description"`
	// Parameters is the JSON Schema (an object) of the tool's input.
	Parameters json.RawMessage `json:"parameters"`
	// PromptSnippet is a one-line summary for the system prompt (omitted
	// when empty).
	PromptSnippet string `json:"promptSnippet,omitempty"`
	// PromptGuidelines are lines added to the system prompt's guidelines
	// (omitted when empty).
	PromptGuidelines []string `json:"promptGuidelines,omitempty"`
	// ExecutionMode is "parallel" or "sequential" (omitted when empty: the
	// host's default).
	ExecutionMode string `json:"executionMode,omitempty"`
	// Render asks the TUI to call tool.render for this tool's calls (1.2).
	Render bool `json:"render,omitempty"`
}

// InitResult is init's result: who the extension is and what it offers.
type InitResult struct {
	// Name matches [a-z][a-z0-9_-]* and equals the name pi.toml gives.
	Name string `json:"name"`
	// Version is the extension's version.
	Version string `json:"version"`
	// Description is one line about the extension (omitted when empty).
	Description string `json:"description,omitempty"`
	// Tools are the tools it provides; always present ([] for none).
	Tools []ToolSpec `json:"tools"`
	// Hooks are the Hook names it handles; always present ([] for none).
	Hooks []string `json:"hooks"`
	// Wants are the grants it would like (shown at install; grants
	// nothing). Omitted when it says nothing.
	Wants *Grants `json:"wants,omitempty"`
	// Commands are slash commands (1.1; omitted when none).
	Commands []CommandSpec `json:"commands,omitempty"`
	// ConfigSchema is a JSON Schema object for [extensions.config] (1.1;
	// omitted when none).
	ConfigSchema json.RawMessage `json:"configSchema,omitempty"`
	// Events are the event types the guest wants with the "event" hook,
	// replacing DefaultEvents (1.1; omitted: the default).
	Events []string `json:"events,omitempty"`
	// Shortcuts are TUI keys that call shortcut.execute (1.2).
	Shortcuts []ShortcutSpec `json:"shortcuts,omitempty"`
	// MessageRenderers are the custom message types the extension draws
	// with message.render (1.2).
	MessageRenderers []string `json:"messageRenderers,omitempty"`
	// Flags are command-line flags (1.2; omitted when none).
	Flags []FlagSpec `json:"flags,omitempty"`
	// Channels are the bus channels whose messages the guest takes (1.2;
	// omitted when none).
	Channels []string `json:"channels,omitempty"`
}

// Block is one piece of content: {"type": "text", "text"} or
// {"type": "image", "data", "mimeType"}. A text block always has "text"
// (a pointer, so "" is written); an image block has no "text".
type Block struct {
	// Type is "text" or "image".
	Type string `json:"type"`
	// Text is a text block's text.
	Text *string `json:"text,omitempty"`
	// Data is an image block's base64 data.
	Data string `json:"data,omitempty"`
	// MimeType is an image block's MIME type ("image/png").
	MimeType string `json:"mimeType,omitempty"`
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: "text", Text: &s} }

// ImageBlock returns an image block.
func ImageBlock(data, mimeType string) Block {
	return Block{Type: "image", Data: data, MimeType: mimeType}
}

// ExecuteParams are the params of tool.execute.
type ExecuteParams struct {
	// ToolName is the tool to run, one of InitResult.Tools.
	ToolName string `json:"toolName"`
	// ToolCallID identifies the call (the model's id for it).
	ToolCallID string `json:"toolCallId"`
	// Input are the arguments, an object already validated against the
	// tool's parameters; {} when the model sent none.
	Input json.RawMessage `json:"input"`
	// Cwd is the directory the call runs in.
	Cwd string `json:"cwd"`
}

// ExecuteResult is tool.execute's result.
type ExecuteResult struct {
	// Content is what the model sees; always present ([] for nothing).
	Content []Block `json:"content"`
	// Details is free JSON for the UI and the event stream, never sent to
	// the model (omitted when empty).
	Details json.RawMessage `json:"details,omitempty"`
	// IsError marks the result as a failure the model should see as one
	// (omitted when false).
	IsError bool `json:"isError,omitempty"`
	// Terminate asks the agent loop to end the run after this batch of
	// tool calls (omitted when false).
	Terminate bool `json:"terminate,omitempty"`
}

// Partial is the payload of the emit import during tool.execute: progress
// for the UI and the event stream. It is not an envelope.
type Partial struct {
	// Content is the partial content; always present.
	Content []Block `json:"content"`
	// Details is free JSON (omitted when empty).
	Details json.RawMessage `json:"details,omitempty"`
}

// ToolCallParams are the params of hook.tool_call: a call about to run.
// (toolCallId comes first here, unlike the other messages.)
type ToolCallParams struct {
	// ToolCallID identifies the call.
	ToolCallID string `json:"toolCallId"`
	// ToolName is the tool about to run (of any extension, or built in).
	ToolName string `json:"toolName"`
	// Input are the validated arguments, an object ({} when none).
	Input json.RawMessage `json:"input"`
	// Paths are the absolute real host paths the call will open, resolved
	// by the host as the tool resolves its arguments; always an array ([]
	// when the tool names none or does not say).
	Paths []string `json:"paths"`
}

// ToolCallResult is hook.tool_call's result: {} lets the call through,
// Block stops it, Input replaces the arguments. The host also accepts null.
type ToolCallResult struct {
	// Block stops the call (omitted when false).
	Block bool `json:"block,omitempty"`
	// Reason is what the model is told when the call is blocked (omitted
	// when empty: the host says which extension blocked it).
	Reason string `json:"reason,omitempty"`
	// Input, an object, replaces the arguments; the host validates them
	// again (omitted when unchanged; ignored when Block).
	Input json.RawMessage `json:"input,omitempty"`
	// Ask asks the person this question before the call runs (1.1;
	// omitted when empty). An answer is exactly one of {}, block, input,
	// ask.
	Ask string `json:"ask,omitempty"`
}

// ToolResultParams are the params of hook.tool_result: a finished call and
// its result as patched by the hooks before this one.
type ToolResultParams struct {
	// ToolName is the tool that ran.
	ToolName string `json:"toolName"`
	// ToolCallID identifies the call.
	ToolCallID string `json:"toolCallId"`
	// Input are the arguments it ran with ({} when none).
	Input json.RawMessage `json:"input"`
	// Content is the result's content; always present.
	Content []Block `json:"content"`
	// Details is the result's details; always present (null when none).
	Details json.RawMessage `json:"details"`
	// IsError says whether the result is an error; always present.
	IsError bool `json:"isError"`
}

// ToolResultPatch is hook.tool_result's result: omitted fields keep their
// value, so {} (or null) changes nothing.
type ToolResultPatch struct {
	// Content replaces the content (a pointer: [] empties it).
	Content *[]Block `json:"content,omitempty"`
	// Details replaces the details.
	Details json.RawMessage `json:"details,omitempty"`
	// IsError replaces the error flag (a pointer: false is written).
	IsError *bool `json:"isError,omitempty"`
}

// BashSpawnParams are the params of hook.bash_spawn: how the bash tool is
// about to start a command. Every field is always present.
type BashSpawnParams struct {
	// Command is the full command line.
	Command string `json:"command"`
	// Cwd is the directory it runs in.
	Cwd string `json:"cwd"`
	// Env holds only the variables named in the extension's grants.env
	// that the command would get.
	Env map[string]string `json:"env"`
}

// BashSpawnResult is hook.bash_spawn's result: an omitted (or null) field
// keeps its value; Env replaces the part of the environment the guest was
// shown.
type BashSpawnResult struct {
	// Command replaces the command line.
	Command *string `json:"command,omitempty"`
	// Cwd replaces the directory.
	Cwd *string `json:"cwd,omitempty"`
	// Env replaces the visible variables.
	Env *map[string]string `json:"env,omitempty"`
}

// EventHead is what every event's params have: an object with a "type"
// (an Event constant) and the fields of that event as the `--mode json`
// stream writes them. Params of event travel as json.RawMessage.
type EventHead struct {
	// Type is the event's type.
	Type string `json:"type"`
}

// EventResult is what a guest answers to event; the host ignores any
// result, and the Go SDK answers {}.
type EventResult struct{}

// ExecParams are the params of the exec host method.
type ExecParams struct {
	// Argv is the command and its arguments; it must match a grants.exec
	// pattern.
	Argv []string `json:"argv"`
	// Cwd is where it runs: absolute, or relative to the project root
	// (omitted: the project root). It must lie inside the fs grants.
	Cwd string `json:"cwd,omitempty"`
	// TimeoutMS ends the command after this many milliseconds (omitted:
	// the deadline of the current call).
	TimeoutMS int64 `json:"timeoutMs,omitempty"`
	// Stdin is written to its standard input (omitted: empty).
	Stdin string `json:"stdin,omitempty"`
}

// ExecResult is exec's result; every field is always present.
type ExecResult struct {
	// Stdout is the command's standard output (its first 4 MiB).
	Stdout string `json:"stdout"`
	// Stderr is its standard error (its first 4 MiB).
	Stderr string `json:"stderr"`
	// ExitCode is its exit status; non-zero is not an error.
	ExitCode int `json:"exitCode"`
}
