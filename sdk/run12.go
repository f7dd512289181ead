package sdk

import (
	"encoding/json"
	"fmt"

	"github.com/pi-go/pi/internal/abi"
)

// This file is ABI 1.2's part for the running extension (docs/abi.md, "ABI
// 1.2"): command-line flags, timers, file watches, the bus, the active
// tool set and tools registered after init, the model, calling the model
// (Complete), the before_provider_request hook, shutdown and reload.
//
// A 1.2 host says so at init (ABIMinor() >= 2). On an older host the SDK
// leaves flags, channels and the before_provider_request hook out of
// init's answer (which a 1.1 host would refuse), FlagValues answers the
// declared defaults, and the host methods answer that the host does not
// know them.

// sdkRun12 is what the extension registered for ABI 1.2, and its live
// timers and watches.
type sdkRun12 struct {
	flags           []abi.FlagSpec
	channels        map[string][]func(BusMessage)
	channelOrder    []string
	providerRequest []func(json.RawMessage) json.RawMessage
	timers          map[string]func()
	watches         map[string]func([]string)
}

// FlagSpec declares a command-line flag: --NAME (a boolean: true),
// --NAME=VALUE or --NAME VALUE.
type FlagSpec struct {
	// Name is without the dashes: [a-z][a-z0-9-]*.
	Name        string
	Description string
	// Boolean makes it a true/false flag; otherwise it takes a string.
	Boolean bool
	// Default is the value when the flag is not given: a bool for a
	// boolean flag, a string otherwise (nil: false, or no value).
	Default any
}

// Flag declares a command-line flag. pi parses it in every mode that
// loads extensions; read it with FlagValues, FlagBool or FlagString.
func Flag(spec FlagSpec) { std.addFlag(spec) }

func (r *registry) addFlag(spec FlagSpec) {
	if !commandPattern(spec.Name) {
		r.fail("sdk.Flag: name %q must match [a-z][a-z0-9-]* (without the dashes)", spec.Name)
		return
	}
	f := abi.FlagSpec{Name: spec.Name, Description: spec.Description, Type: abi.FlagString}
	if spec.Boolean {
		f.Type = abi.FlagBoolean
	}
	if spec.Default != nil {
		_, isBool := spec.Default.(bool)
		_, isString := spec.Default.(string)
		if spec.Boolean && !isBool || !spec.Boolean && !isString {
			r.fail("sdk.Flag %q: default %v must be a %s", spec.Name, spec.Default, f.Type)
			return
		}
		f.Default, _ = json.Marshal(spec.Default)
	}
	for _, o := range r.run12.flags {
		if o.Name == spec.Name {
			r.fail("sdk.Flag: flag --%s declared twice", spec.Name)
			return
		}
	}
	r.run12.flags = append(r.run12.flags, f)
}

// FlagValues returns every declared flag's value: as given on the command
// line, else its default, else false (boolean) or nil (string). On a host
// older than ABI 1.2 it answers the defaults.
//
// # Errors
//
// A *HostError.
func FlagValues() (map[string]any, error) {
	out := map[string]any{}
	if std.abiMinor < 2 {
		for _, f := range std.run12.flags {
			var v any
			if f.Default != nil {
				_ = json.Unmarshal(f.Default, &v)
			} else if f.Type == abi.FlagBoolean {
				v = false
			}
			out[f.Name] = v
		}
		return out, nil
	}
	var res abi.FlagsGetResult
	if err := HostCall(abi.HostMethodFlagsGet, struct{}{}, &res); err != nil {
		return nil, err
	}
	for k, raw := range res.Flags {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("flag --%s: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// FlagBool is a boolean flag's value (false when not declared).
//
// # Errors
//
// As FlagValues.
func FlagBool(name string) (bool, error) {
	vals, err := FlagValues()
	if err != nil {
		return false, err
	}
	b, _ := vals[name].(bool)
	return b, nil
}

// FlagString is a string flag's value; ok is false when it was neither
// given nor has a default.
//
// # Errors
//
// As FlagValues.
func FlagString(name string) (value string, ok bool, err error) {
	vals, err := FlagValues()
	if err != nil {
		return "", false, err
	}
	s, ok := vals[name].(string)
	return s, ok, nil
}

// Timer is a timer set with SetTimer.
type Timer struct{ ID string }

// SetTimer calls fn after ms milliseconds (at least 10), and every ms
// milliseconds after that when repeat is set. A fire is an ordinary call
// from the host: it never overlaps another, and a repeating timer skips
// its fires while fn still runs. An extension has at most 32 timers; they
// end with the instance (a fault discards it).
//
// # Errors
//
// A *HostError: ms below 10, too many timers.
func SetTimer(ms int, repeat bool, fn func()) (Timer, error) {
	var res abi.IDResult
	if err := HostCall(abi.HostMethodTimerSet, abi.TimerSetParams{MS: int64(ms), Repeat: repeat}, &res); err != nil {
		return Timer{}, err
	}
	if std.run12.timers == nil {
		std.run12.timers = map[string]func(){}
	}
	std.run12.timers[res.ID] = fn
	return Timer{ID: res.ID}, nil
}

// Clear stops the timer.
//
// # Errors
//
// A *HostError: no such timer (it fired once, or was cleared).
func (t Timer) Clear() error {
	delete(std.run12.timers, t.ID)
	return HostCall(abi.HostMethodTimerClear, abi.IDParams{ID: t.ID}, nil)
}

// Watch is a file watch added with WatchPath.
type Watch struct{ ID string }

// WatchPath calls fn with the absolute paths that were created, written,
// removed or renamed under path (a file, or a folder; recursive follows
// its sub-folders), gathered for a moment so that one call carries many.
// path is absolute or relative to the project root and must lie in a
// grants.fs directory once every symlink is resolved. At most 16 watches.
//
// # Errors
//
// A *HostError: outside the fs grants, no such path, too many watches.
func WatchPath(path string, recursive bool, fn func(paths []string)) (Watch, error) {
	var res abi.IDResult
	if err := HostCall(abi.HostMethodWatchAdd, abi.WatchAddParams{Path: path, Recursive: recursive}, &res); err != nil {
		return Watch{}, err
	}
	if std.run12.watches == nil {
		std.run12.watches = map[string]func([]string){}
	}
	std.run12.watches[res.ID] = fn
	return Watch{ID: res.ID}, nil
}

// Remove ends the watch.
//
// # Errors
//
// A *HostError: no such watch.
func (w Watch) Remove() error {
	delete(std.run12.watches, w.ID)
	return HostCall(abi.HostMethodWatchRemove, abi.IDParams{ID: w.ID}, nil)
}

// BusMessage is a message of the bus: data another extension emitted on a
// channel.
type BusMessage struct {
	Channel string
	Data    json.RawMessage
	// From is the sending extension's name.
	From string
}

// OnBus takes the messages other extensions emit on channel
// ([a-z0-9:._-]{1,64}); they arrive in order, never the extension's own.
func OnBus(channel string, fn func(BusMessage)) { std.onBus(channel, fn) }

func (r *registry) onBus(channel string, fn func(BusMessage)) {
	if !channelPattern(channel) {
		r.fail("sdk.OnBus: channel %q must match [a-z0-9:._-]{1,64}", channel)
		return
	}
	if r.run12.channels == nil {
		r.run12.channels = map[string][]func(BusMessage){}
	}
	if _, ok := r.run12.channels[channel]; !ok {
		r.run12.channelOrder = append(r.run12.channelOrder, channel)
	}
	r.run12.channels[channel] = append(r.run12.channels[channel], fn)
}

// channelPattern is the bus channel rule on the guest side.
func channelPattern(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == ':' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// BusEmit sends data (as JSON, at most 256 KiB) on channel to every other
// extension that takes it; it returns before they get it.
//
// # Errors
//
// A *HostError: a bad channel, data too large; or data that does not
// marshal.
func BusEmit(channel string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("bus %s: %w", channel, err)
	}
	return HostCall(abi.HostMethodBusEmit, abi.BusEmitParams{Channel: channel, Data: b}, nil)
}

// ToolState is one tool as ListTools shows it.
type ToolState struct {
	Name, Description string
	// Source is "builtin", "extension:NAME" or "mcp:SERVER".
	Source string
	Active bool
}

// ListTools lists every tool pi has, and which are active.
//
// # Errors
//
// A *HostError (not available in tool and inspect modes).
func ListTools() ([]ToolState, error) {
	var res abi.ToolsListResult
	if err := HostCall(abi.HostMethodToolsList, struct{}{}, &res); err != nil {
		return nil, err
	}
	out := make([]ToolState, 0, len(res.Tools))
	for _, t := range res.Tools {
		out = append(out, ToolState{Name: t.Name, Description: t.Description, Source: t.Source, Active: t.Active})
	}
	return out, nil
}

// SetActiveTools makes names the active tools from the next model request.
// It may drop any tool, but add only tools active at start and the
// extension's own.
//
// # Errors
//
// A *HostError naming a tool it may not activate.
func SetActiveTools(names ...string) error {
	return HostCall(abi.HostMethodToolsSetActive, abi.ToolNamesParams{Names: nonNil(names)}, nil)
}

// LateTool registers a tool's handler without declaring it at init: the
// tool exists for the model once RegisterTools names it (then for the rest
// of the process; a fresh instance still runs it, because every instance
// registers the handler).
func LateTool[In any](spec ToolSpec, fn func(ctx *Context, in In) (Result, error)) {
	Tool(spec, fn)
	if n := len(std.tools); n > 0 && std.tools[n-1].spec.Name == spec.Name {
		std.tools[n-1].late = true
	}
}

// RegisterTools asks pi to add the LateTool tools named, active at once.
//
// # Errors
//
// A name no LateTool registered; a *HostError (a clash, a bad spec).
func RegisterTools(names ...string) error {
	var specs []abi.ToolSpec
	for _, n := range names {
		var t *toolEntry
		for _, e := range std.tools {
			if e.spec.Name == n && e.late {
				t = e
			}
		}
		if t == nil {
			return fmt.Errorf("sdk.RegisterTools: no LateTool %q", n)
		}
		specs = append(specs, toolSpecToABI(t))
	}
	return HostCall(abi.HostMethodToolsRegister, abi.ToolsRegisterParams{Tools: specs}, nil)
}

// UnregisterTools removes tools RegisterTools added.
//
// # Errors
//
// A *HostError naming a tool the extension did not register.
func UnregisterTools(names ...string) error {
	return HostCall(abi.HostMethodToolsUnregister, abi.ToolNamesParams{Names: nonNil(names)}, nil)
}

func toolSpecToABI(t *toolEntry) abi.ToolSpec {
	return abi.ToolSpec{
		Name: t.spec.Name, Label: t.spec.Label, Description: t.spec.Description, Parameters: t.params,
		PromptSnippet: t.spec.PromptSnippet, PromptGuidelines: t.spec.PromptGuidelines, ExecutionMode: string(t.spec.ExecutionMode),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ModelInfo is the current model.
type ModelInfo struct {
	Provider, ID  string
	ContextWindow int
	// ThinkingLevel is off, minimal, low, medium, high or xhigh.
	ThinkingLevel string
}

// ModelRef names a model.
type ModelRef struct{ Provider, ID string }

// CurrentModel returns the model pi uses now.
//
// # Errors
//
// A *HostError.
func CurrentModel() (ModelInfo, error) {
	var res abi.ModelGetResult
	if err := HostCall(abi.HostMethodModelGet, struct{}{}, &res); err != nil {
		return ModelInfo{}, err
	}
	return ModelInfo{Provider: res.Provider, ID: res.ID, ContextWindow: res.ContextWindow, ThinkingLevel: res.ThinkingLevel}, nil
}

// Models lists the models pi could switch to.
//
// # Errors
//
// A *HostError.
func Models() ([]ModelRef, error) {
	var res abi.ModelListResult
	if err := HostCall(abi.HostMethodModelList, struct{}{}, &res); err != nil {
		return nil, err
	}
	out := make([]ModelRef, 0, len(res.Models))
	for _, m := range res.Models {
		out = append(out, ModelRef{Provider: m.Provider, ID: m.ID})
	}
	return out, nil
}

// SetModel switches pi's model (provider "" keeps the provider). It needs
// grants.model.
//
// # Errors
//
// A *HostError: no grant, an unknown model.
func SetModel(provider, id string) error {
	return HostCall(abi.HostMethodModelSet, abi.ModelSetParams{Provider: provider, ID: id}, nil)
}

// SetThinkingLevel sets the thinking level (off, minimal, low, medium,
// high, xhigh) and returns the level applied, clamped to the model's. It
// needs grants.model.
//
// # Errors
//
// A *HostError: no grant, a bad level.
func SetThinkingLevel(level string) (string, error) {
	var res abi.ThinkingLevelParams
	if err := HostCall(abi.HostMethodModelSetThinkingLevel, abi.ThinkingLevelParams{Level: level}, &res); err != nil {
		return "", err
	}
	return res.Level, nil
}

// CompleteMessage is one message of a Complete request: Role "user" or
// "assistant".
type CompleteMessage struct {
	Role    string
	Content []Block
}

// CompleteRequest is what Complete sends to the model: exactly this
// system prompt and these messages, no tools.
type CompleteRequest struct {
	SystemPrompt string
	Messages     []CompleteMessage
	MaxTokens    int
}

// CompleteResult is the model's answer.
type CompleteResult struct {
	Content                   []Block
	StopReason                string
	InputTokens, OutputTokens int
}

// Text joins the answer's text blocks.
func (c CompleteResult) Text() string {
	s := ""
	for _, b := range c.Content {
		if b.Type == "text" {
			s += b.Text
		}
	}
	return s
}

// UserMessage is a user message of one text.
func UserMessage(text string) CompleteMessage {
	return CompleteMessage{Role: "user", Content: []Block{TextBlock(text)}}
}

// Complete calls pi's model (its endpoint and key, which the extension
// never sees). It needs grants.llm and spends the extension's token quota
// ([extensions.limits] llm_tokens); nothing is saved or shown.
//
// # Errors
//
// A *HostError: no grant, "llm quota exceeded (N of M tokens)", the
// provider's error.
func Complete(req CompleteRequest) (CompleteResult, error) {
	p := abi.LLMCompleteParams{SystemPrompt: req.SystemPrompt, MaxTokens: req.MaxTokens, Messages: []abi.LLMMessage{}}
	for _, m := range req.Messages {
		b, err := json.Marshal(blocksToABI(m.Content))
		if err != nil {
			return CompleteResult{}, err
		}
		p.Messages = append(p.Messages, abi.LLMMessage{Role: m.Role, Content: b})
	}
	var res abi.LLMCompleteResult
	if err := HostCall(abi.HostMethodLLMComplete, p, &res); err != nil {
		return CompleteResult{}, err
	}
	return CompleteResult{Content: blocksFromABI(res.Content), StopReason: res.StopReason, InputTokens: res.Usage.Input, OutputTokens: res.Usage.Output}, nil
}

// OnBeforeProviderRequest registers a before_provider_request hook: fn
// sees the JSON body pi is about to POST to the provider and returns it,
// changed, or nil to keep it. A change counts only with grants.model;
// pi keeps its own "stream" and endpoint.
func OnBeforeProviderRequest(fn func(payload json.RawMessage) json.RawMessage) {
	std.run12.providerRequest = append(std.run12.providerRequest, fn)
}

// Shutdown ends pi once the current command returns (only from a command
// or a shortcut).
//
// # Errors
//
// A *HostError (called elsewhere).
func Shutdown() error { return HostCall(abi.HostMethodShutdown, struct{}{}, nil) }

// Reload makes pi read pi.toml again and load every extension afresh once
// the current command returns (only from a command or a shortcut).
//
// # Errors
//
// A *HostError (called elsewhere).
func Reload() error { return HostCall(abi.HostMethodReload, struct{}{}, nil) }

// initResultRun12 adds the 1.2 fields to init's answer, only for a 1.2
// host.
func (r *registry) initResultRun12(res *abi.InitResult) {
	has := len(r.run12.flags) > 0 || len(r.run12.channels) > 0 || len(r.run12.providerRequest) > 0
	if r.abiMinor < 2 {
		if res.Wants != nil { // a 1.1 host decodes wants strictly
			res.Wants.LLM, res.Wants.Model = false, false
		}
		if has {
			Logf(LevelWarn, "extension %s uses ABI 1.2 (flags, bus channels, before_provider_request), but the host speaks ABI 1.%d: those parts stay unused", r.name, r.abiMinor)
		}
		return
	}
	res.Flags = r.run12.flags
	res.Channels = r.run12.channelOrder
	if len(r.run12.providerRequest) > 0 {
		res.Hooks = append(res.Hooks, abi.HookBeforeProviderRequest)
	}
}

// run12Params keeps the params of a 1.2 guest method as they came.
type run12Params struct{ raw json.RawMessage }

func (p *run12Params) UnmarshalJSON(b []byte) error {
	p.raw = append(json.RawMessage(nil), b...)
	return nil
}

// handleRun12 answers timer.fire, watch.fire, bus.message and
// hook.before_provider_request.
func (r *registry) handleRun12(method string, p *run12Params) (any, error) {
	switch method {
	case abi.MethodTimerFire:
		var f abi.IDParams
		if err := json.Unmarshal(p.raw, &f); err != nil {
			return nil, fmt.Errorf("malformed timer.fire: %w", err)
		}
		fn, ok := r.run12.timers[f.ID]
		if !ok {
			return nil, fmt.Errorf("no timer %q", f.ID)
		}
		fn()
		return abi.EmptyResult{}, nil
	case abi.MethodWatchFire:
		var f abi.WatchFireParams
		if err := json.Unmarshal(p.raw, &f); err != nil {
			return nil, fmt.Errorf("malformed watch.fire: %w", err)
		}
		fn, ok := r.run12.watches[f.ID]
		if !ok {
			return nil, fmt.Errorf("no watch %q", f.ID)
		}
		fn(f.Paths)
		return abi.EmptyResult{}, nil
	case abi.MethodBusMessage:
		var m abi.BusMessageParams
		if err := json.Unmarshal(p.raw, &m); err != nil {
			return nil, fmt.Errorf("malformed bus.message: %w", err)
		}
		for _, fn := range r.run12.channels[m.Channel] {
			fn(BusMessage{Channel: m.Channel, Data: m.Data, From: m.From})
		}
		return abi.EmptyResult{}, nil
	case abi.MethodBeforeProviderRequest:
		var in abi.ProviderRequestParams
		if err := json.Unmarshal(p.raw, &in); err != nil {
			return nil, fmt.Errorf("malformed hook.before_provider_request: %w", err)
		}
		payload, changed := in.Payload, false
		for _, fn := range r.run12.providerRequest {
			if out := fn(payload); out != nil {
				payload, changed = out, true
			}
		}
		if !changed {
			return abi.EmptyResult{}, nil
		}
		return abi.ProviderRequestParams{Payload: payload}, nil
	}
	return nil, fmt.Errorf("unknown method %q", method)
}
