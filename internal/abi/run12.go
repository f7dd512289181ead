package abi

import "encoding/json"

// This file declares the ABI 1.2 messages of the running extension (docs/abi.md,
// "ABI 1.2"): command-line flags, the active tool set, the model, calling
// the model (llm.complete), timers, watches, the bus, shutdown and reload,
// the before_provider_request hook and the model_select event. A guest
// sends the 1.2 result fields (flags, channels) only when
// InitParams.ABIMinor >= 2: a 1.1 host decodes init's answer strictly.

// Host methods of ABI 1.2 (host_call) for the running extension.
const (
	HostMethodFlagsGet              = "flags.get"
	HostMethodToolsList             = "tools.list"
	HostMethodToolsSetActive        = "tools.setActive"
	HostMethodToolsRegister         = "tools.register"
	HostMethodToolsUnregister       = "tools.unregister"
	HostMethodModelGet              = "model.get"
	HostMethodModelList             = "model.list"
	HostMethodModelSet              = "model.set"
	HostMethodModelSetThinkingLevel = "model.setThinkingLevel"
	HostMethodLLMComplete           = "llm.complete"
	HostMethodTimerSet              = "timer.set"
	HostMethodTimerClear            = "timer.clear"
	HostMethodWatchAdd              = "watch.add"
	HostMethodWatchRemove           = "watch.remove"
	HostMethodBusEmit               = "bus.emit"
	HostMethodShutdown              = "pi.shutdown"
	HostMethodReload                = "pi.reload"
)

// Guest methods of ABI 1.2 (pi_call) for the running extension.
const (
	MethodTimerFire             = "timer.fire"
	MethodWatchFire             = "watch.fire"
	MethodBusMessage            = "bus.message"
	MethodBeforeProviderRequest = "hook.before_provider_request"
)

// HookBeforeProviderRequest is the hook that sees (and, with grants.model,
// replaces) the JSON body pi is about to POST to the model's provider.
const HookBeforeProviderRequest = "before_provider_request"

// EventModelSelect is sent on every change of the model (1.2).
const EventModelSelect = "model_select"

// Flag types of FlagSpec.Type.
const (
	FlagBoolean = "boolean"
	FlagString  = "string"
)

// FlagSpec declares one command-line flag in InitResult.Flags (1.2):
// --NAME, --NAME=VALUE or --NAME VALUE.
type FlagSpec struct {
	// Name matches [a-z][a-z0-9-]*, without the dashes.
	Name string `json:"name"`
	// Description is one line for --help.
	Description string `json:"description"`
	// Type is FlagBoolean or FlagString.
	Type string `json:"type"`
	// Default is the value when the flag is not given: a boolean or a
	// string as Type says (omitted: false, or null for a string).
	Default json.RawMessage `json:"default,omitempty"`
}

// FlagsGetResult is flags.get's result: every declared flag by name, as
// given, else its default, else false (boolean) or null (string).
type FlagsGetResult struct {
	Flags map[string]json.RawMessage `json:"flags"`
}

// ToolState is one tool of tools.list.
type ToolState struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Source is "builtin", "extension:NAME" or "mcp:SERVER".
	Source string `json:"source"`
	Active bool   `json:"active"`
}

// ToolsListResult is tools.list's result.
type ToolsListResult struct {
	Tools []ToolState `json:"tools"`
}

// ToolNamesParams are the params of tools.setActive and tools.unregister.
type ToolNamesParams struct {
	Names []string `json:"names"`
}

// ToolsRegisterParams are tools.register's params: tools declared as init
// declares them.
type ToolsRegisterParams struct {
	Tools []ToolSpec `json:"tools"`
}

// ModelRef names a model: its provider and id.
type ModelRef struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
}

// ModelGetResult is model.get's result.
type ModelGetResult struct {
	Provider      string `json:"provider"`
	ID            string `json:"id"`
	ContextWindow int    `json:"contextWindow"`
	ThinkingLevel string `json:"thinkingLevel"`
}

// ModelListResult is model.list's result.
type ModelListResult struct {
	Models []ModelRef `json:"models"`
}

// ModelSetParams are model.set's params.
type ModelSetParams struct {
	// Provider is omitted for the current provider.
	Provider string `json:"provider,omitempty"`
	ID       string `json:"id"`
}

// ThinkingLevelParams are model.setThinkingLevel's params, and its result
// (the level as applied, clamped to the model's).
type ThinkingLevelParams struct {
	Level string `json:"level"`
}

// LLMMessage is one message of llm.complete.
type LLMMessage struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	// Content is a string or an array of Block.
	Content json.RawMessage `json:"content"`
}

// LLMCompleteParams are llm.complete's params.
type LLMCompleteParams struct {
	SystemPrompt string       `json:"systemPrompt,omitempty"`
	Messages     []LLMMessage `json:"messages"`
	MaxTokens    int          `json:"maxTokens,omitempty"`
}

// LLMUsage counts the tokens of one llm.complete.
type LLMUsage struct {
	Input  int `json:"input"`
	Output int `json:"output"`
}

// LLMCompleteResult is llm.complete's result.
type LLMCompleteResult struct {
	Content    []Block  `json:"content"`
	StopReason string   `json:"stopReason"`
	Usage      LLMUsage `json:"usage"`
}

// TimerSetParams are timer.set's params.
type TimerSetParams struct {
	// MS is at least 10.
	MS     int64 `json:"ms"`
	Repeat bool  `json:"repeat,omitempty"`
}

// WatchAddParams are watch.add's params.
type WatchAddParams struct {
	// Path is absolute or relative to projectRoot, inside grants.fs.
	Path      string `json:"path"`
	Recursive bool   `json:"recursive,omitempty"`
}

// IDParams are the params of timer.clear and watch.remove, and of
// timer.fire; IDResult (the same shape) is the result of timer.set and
// watch.add.
type IDParams struct {
	ID string `json:"id"`
}

// IDResult is the result of timer.set and watch.add.
type IDResult = IDParams

// BusEmitParams are bus.emit's params.
type BusEmitParams struct {
	// Channel matches [a-z0-9:._-]{1,64}.
	Channel string `json:"channel"`
	// Data is any JSON of at most 256 KiB.
	Data json.RawMessage `json:"data"`
}

// WatchFireParams are watch.fire's params: the absolute paths that changed.
type WatchFireParams struct {
	ID    string   `json:"id"`
	Paths []string `json:"paths"`
}

// BusMessageParams are bus.message's params.
type BusMessageParams struct {
	Channel string          `json:"channel"`
	Data    json.RawMessage `json:"data"`
	// From is the sending extension's name.
	From string `json:"from"`
}

// ProviderRequestParams are hook.before_provider_request's params, and its
// result when it replaces the body ({} keeps it).
type ProviderRequestParams struct {
	Payload json.RawMessage `json:"payload,omitempty"`
}

// ModelSelectEvent is the params of an event of type model_select.
type ModelSelectEvent struct {
	Type          string    `json:"type"`
	Model         ModelRef  `json:"model"`
	PreviousModel *ModelRef `json:"previousModel"`
	// Source is "set", "cycle" or "restore".
	Source string `json:"source"`
}
