package sdk

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pi-go/pi/internal/abi"
)

// ABI 1.1: what a guest learns at init (the facts), what it may offer
// (slash commands, a config schema, the input, before_agent_start and stop
// hooks, an event subscription, asking in a tool_call hook) and what it
// may call (kv, http, tool.call, ui). Everything here is optional; the SDK
// sends 1.1 fields in init's answer only when the host speaks 1.1
// (ABIMinor() >= 1), so an extension built with it still loads in a 1.0
// host (its 1.1 parts then stay unused, and a warning is logged).

// The modes Mode returns.
const (
	ModeInteractive = abi.ModeInteractive
	ModePrint       = abi.ModePrint
	ModeJSON        = abi.ModeJSON
	ModeRPC         = abi.ModeRPC
	ModeTool        = abi.ModeTool
	ModeInspect     = abi.ModeInspect
)

// ABIMinor returns the minor version of the host's ABI: 1 for a 1.1 host,
// 0 for a 1.0 host (or before init).
func ABIMinor() int { return std.abiMinor }

// Trusted reports whether the project's pi.toml is trusted (or trusted for
// this run); false for a 1.0 host.
func Trusted() bool { return std.trusted }

// Mode returns how pi runs: ModeInteractive, ModePrint, ModeJSON, ModeRPC,
// ModeTool or ModeInspect ("" for a 1.0 host).
func Mode() string { return std.mode }

// HasUI reports whether a person can answer Confirm (interactive and RPC
// modes).
func HasUI() bool { return std.hasUI }

// ProjectRoot returns the folder whose pi.toml applies, or the working
// directory when none does ("" for a 1.0 host).
func ProjectRoot() string { return std.projectRoot }

// CommandSpec declares a slash command.
type CommandSpec struct {
	// Name is without the slash: [a-z][a-z0-9-]*.
	Name string
	// Description is one line for /help.
	Description string
	// ArgumentHint shows what it takes, such as "[item]".
	ArgumentHint string
}

// CommandResult is a command's answer: Text is shown to the user, Prompt
// (when not empty) is sent to the model as the user's message.
type CommandResult struct {
	Text   string
	Prompt string
}

// Command registers a slash command: /NAME ARGS typed by the user runs fn
// with ARGS (the rest of the line, trimmed) instead of going to the model.
// A returned error is shown to the user.
func Command(spec CommandSpec, fn func(args string) (CommandResult, error)) {
	std.addCommand(spec, fn)
}

// Input is what an input hook sees: the text a person sent (as earlier
// hooks left it), its images and the mode.
type Input struct {
	Text   string
	Images []Block
	Mode   string
}

// InputAction is an input hook's answer; the zero value lets the prompt
// through unchanged. Build one with InputReplace or InputHandled.
type InputAction struct {
	// Replace replaces the prompt's text with Text.
	Replace bool
	Text    string
	// Handled keeps the prompt from the model; Message is shown to the
	// user.
	Handled bool
	Message string
}

// InputReplace returns an answer that replaces the prompt's text.
func InputReplace(text string) InputAction { return InputAction{Replace: true, Text: text} }

// InputHandled returns an answer that keeps the prompt from the model and
// shows message instead.
func InputHandled(message string) InputAction { return InputAction{Handled: true, Message: message} }

// OnInput registers an input hook: it sees every prompt a person sends
// (interactive, -p, RPC; not messages extensions make) before anything
// else does. Several hooks chain; after a handled answer the rest do not
// run. A hook that panics keeps the prompt from the model (fail closed).
func OnInput(fn func(Input) InputAction) { std.input = append(std.input, fn) }

// BeforeAgentStart is what a before_agent_start hook sees.
type BeforeAgentStart struct {
	Prompt       string
	SystemPrompt string
}

// AgentStartChange is a before_agent_start hook's answer; the zero value
// changes nothing.
type AgentStartChange struct {
	// SystemPrompt, when not empty, replaces the system prompt for this
	// prompt's run.
	SystemPrompt string
	// AppendSystemPrompt is added after it with a blank line.
	AppendSystemPrompt string
	// Messages are added as user-role context before the prompt, one
	// message each.
	Messages [][]Block
}

// OnBeforeAgentStart registers a before_agent_start hook: once per prompt,
// after the input hooks, it may replace or extend the system prompt and
// add context messages for that prompt's run.
func OnBeforeAgentStart(fn func(BeforeAgentStart) AgentStartChange) {
	std.beforeStart = append(std.beforeStart, fn)
}

// Stop is what a stop hook sees: the model ended a turn without tool calls
// and the run is about to end.
type Stop struct {
	Reason   string
	LastText string
	Turns    int
}

// StopDecision is a stop hook's answer; the zero value lets the run end.
type StopDecision struct {
	// Continue sends Message as a user message and the run goes on (at
	// most 3 times per prompt, over all extensions).
	Continue bool
	Message  string
}

// Continue returns a decision that keeps the run going with message.
func Continue(message string) StopDecision { return StopDecision{Continue: true, Message: message} }

// OnStop registers a stop hook. Several chain: the first that continues
// wins.
func OnStop(fn func(Stop) StopDecision) { std.stop = append(std.stop, fn) }

// Ask returns a tool_call decision that asks the person question before
// the call runs (interactive), or blocks it with "needs approval" unless
// pi runs with --yes (other modes).
func Ask(question string) ToolCallDecision { return ToolCallDecision{Ask: question} }

// ConfigSchema declares the JSON Schema of the extension's configuration
// ([extensions.config]); the host checks the configuration against it at
// load and at `pi ext install --ext-config`, with messages naming the
// pi.toml keys. schema is a struct value (or a pointer to one), from which
// the schema is derived as for tool inputs (fields without omitempty are
// required, a description tag describes), or a JSON Schema as a map,
// json.RawMessage, []byte or string.
func ConfigSchema(schema any) { std.setConfigSchema(schema) }

// Events chooses the event types OnEvent functions get, replacing the
// default (agent_start, agent_end, turn_start, turn_end,
// tool_execution_start, tool_execution_end); ABI 1.1 adds message_end
// (assistant messages), session_start, session_shutdown, compaction_start
// and compaction_end.
func Events(types ...string) { std.events11 = append([]string(nil), types...) }

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
// A *HostError ("kv quota exceeded (N of M bytes)", an invalid key), or v
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

// addCommand registers a command, or records why it cannot.
func (r *registry) addCommand(spec CommandSpec, fn func(string) (CommandResult, error)) {
	if !commandPattern(spec.Name) {
		r.fail("sdk.Command: name %q must match [a-z][a-z0-9-]* (without the slash)", spec.Name)
		return
	}
	for _, c := range r.commands {
		if c.spec.Name == spec.Name {
			r.fail("sdk.Command: command /%s registered twice", spec.Name)
			return
		}
	}
	r.commands = append(r.commands, &commandEntry{spec: spec, run: fn})
}

// commandPattern is extspec.ValidCommandName on the guest side (the SDK
// imports no host package): [a-z][a-z0-9-]*.
func commandPattern(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

type commandEntry struct {
	spec CommandSpec
	run  func(string) (CommandResult, error)
}

// setConfigSchema derives or takes the config schema.
func (r *registry) setConfigSchema(schema any) {
	var raw json.RawMessage
	var err error
	switch v := schema.(type) {
	case nil:
		r.fail("sdk.ConfigSchema: nil schema")
		return
	case json.RawMessage, []byte, string, map[string]any:
		raw, err = schemaJSON(v, nil)
	default:
		t := reflect.TypeOf(v)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			r.fail("sdk.ConfigSchema: want a struct or a JSON Schema, got %T", schema)
			return
		}
		raw, err = schemaJSON(nil, t)
	}
	if err != nil {
		r.fail("sdk.ConfigSchema: %v", err)
		return
	}
	r.configSchema = raw
}

// initResult11 adds the 1.1 fields to init's answer (only for a 1.1 host).
func (r *registry) initResult11(res *abi.InitResult) {
	has11 := len(r.commands) > 0 || len(r.input) > 0 || len(r.beforeStart) > 0 || len(r.stop) > 0 || r.configSchema != nil || r.events11 != nil ||
		(r.wants != nil && (len(r.wants.HTTP) > 0 || len(r.wants.Tools) > 0))
	if r.abiMinor < 1 {
		if has11 {
			Logf(LevelWarn, "extension %s uses ABI 1.1 (commands, prompt hooks, config schema, events, http or tools wants), but the host speaks ABI 1.0: those parts stay unused", r.name)
		}
		if res.Wants != nil {
			res.Wants.HTTP, res.Wants.Tools = nil, nil
		}
		return
	}
	for _, c := range r.commands {
		res.Commands = append(res.Commands, abi.CommandSpec{Name: c.spec.Name, Description: c.spec.Description, ArgumentHint: c.spec.ArgumentHint})
	}
	if len(r.input) > 0 {
		res.Hooks = append(res.Hooks, abi.HookInput)
	}
	if len(r.beforeStart) > 0 {
		res.Hooks = append(res.Hooks, abi.HookBeforeAgentStart)
	}
	if len(r.stop) > 0 {
		res.Hooks = append(res.Hooks, abi.HookStop)
	}
	res.ConfigSchema = r.configSchema
	if r.events11 != nil && len(r.events) > 0 {
		res.Events = append([]string{}, r.events11...)
	}
}

// hookInput runs the input hooks.
func (r *registry) hookInput(p *abi.InputParams) (any, error) {
	in := Input{Text: p.Text, Images: blocksFromABI(p.Images), Mode: p.Mode}
	replaced := false
	for _, fn := range r.input {
		a := fn(in)
		if a.Handled {
			return abi.InputResult{Handled: true, Message: a.Message}, nil
		}
		if a.Replace {
			in.Text, replaced = a.Text, true
		}
	}
	if replaced {
		t := in.Text
		return abi.InputResult{Text: &t}, nil
	}
	return abi.InputResult{}, nil
}

// hookBeforeStart runs the before_agent_start hooks, chained: each sees
// the system prompt as the ones before it left it. The answer carries the
// last replacement as systemPrompt and what was appended after it as
// appendSystemPrompt.
func (r *registry) hookBeforeStart(p *abi.BeforeAgentStartParams) (any, error) {
	sys := p.SystemPrompt
	var out abi.BeforeAgentStartResult
	var appends []string
	for _, fn := range r.beforeStart {
		c := fn(BeforeAgentStart{Prompt: p.Prompt, SystemPrompt: sys})
		if c.SystemPrompt != "" {
			base := c.SystemPrompt
			sys, out.SystemPrompt, appends = base, &base, nil
		}
		if c.AppendSystemPrompt != "" {
			sys = strings.TrimRight(sys, "\n") + "\n\n" + c.AppendSystemPrompt
			appends = append(appends, c.AppendSystemPrompt)
		}
		for _, m := range c.Messages {
			out.Messages = append(out.Messages, abi.ContextMessage{Content: blocksToABI(m)})
		}
	}
	out.AppendSystemPrompt = strings.Join(appends, "\n\n")
	return out, nil
}

// hookStop runs the stop hooks until one continues.
func (r *registry) hookStop(p *abi.StopParams) (any, error) {
	for _, fn := range r.stop {
		d := fn(Stop{Reason: p.Reason, LastText: p.LastText, Turns: p.Turns})
		if d.Continue {
			if strings.TrimSpace(d.Message) == "" {
				return nil, errors.New("a stop hook continued without a message")
			}
			return abi.StopResult{Continue: true, Message: d.Message}, nil
		}
	}
	return abi.StopResult{}, nil
}

// command runs a command.
func (r *registry) command(p *abi.CommandParams) (any, error) {
	for _, c := range r.commands {
		if c.spec.Name == p.Name {
			res, err := c.run(p.Args)
			if err != nil {
				return nil, err
			}
			return abi.CommandResult{Text: res.Text, Prompt: res.Prompt}, nil
		}
	}
	return nil, fmt.Errorf("extension %q has no command /%s", r.name, p.Name)
}
