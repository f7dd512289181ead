package extensions

import (
	"encoding/json"
	"time"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/extspec"
)

// Defaults and hard limits of ABI v1. The limits an entry may set
// (memory_mb, timeout_ms) and their defaults are runtime/extspec's.
const (
	// DefaultHookTimeout bounds init, each hook call and each event.
	DefaultHookTimeout = 5 * time.Second
	// MaxResponseBytes is the largest response pi_call may return; a bigger
	// one is a fault.
	MaxResponseBytes = 16 << 20
	// MaxFaultsInARow is how many consecutive faults disable an extension.
	MaxFaultsInARow = 3
)

// Grants is what an extension may touch: the one grants type, declared
// with its rules in runtime/extspec. FS entries are "ro:PATH" or "rw:PATH",
// PATH relative to Options.ProjectRoot (or absolute); each is a directory
// mounted at its real absolute path. Exec entries are command patterns
// (runtime/execgrant) matched against the argv of the `exec` host method.
// Env entries are names of environment variables the guest may read.
type Grants = extspec.Grants

// Limits bound an extension; zero values take the defaults (64 MiB, 30 s
// per tool.execute; init with _initialize, hooks and events are always
// bounded by DefaultHookTimeout). The one limits type, declared with its
// bounds in runtime/extspec.
type Limits = extspec.Limits

// Spec says which module to load and with what grants, limits and config.
type Spec struct {
	// Name is the extension's name as pi.toml gives it. When set it must equal
	// the name the guest's init returns; empty takes the guest's name.
	Name string
	// Path is the absolute path of the .wasm file.
	Path string
	// SHA256 is the expected hex sha256 of the file; "" skips the check
	// (only for `-e FILE` one-off runs).
	SHA256 string
	// Override lets the extension's tools replace built-ins of the same name.
	Override bool
	Grants   Grants
	Limits   Limits
	// Config is [extensions.config], sent to init as JSON.
	Config map[string]any
	// ConfigKey is how messages about Config name it ("extensions[0].config"
	// of the pi.toml that holds it); default "config".
	ConfigKey string
	// Scope is "project", "global" or "flag"; informational, except that
	// only a "global" entry takes over a global kv store of an older pi.
	Scope string
	// File is the pi.toml whose [[extensions]] entry this is; with Name it
	// identifies the entry, and so its kv stores (KVStoreID). "" for a
	// module no pi.toml names (-e flags, tests): its stores are its
	// digest's.
	File string
}

// ToolSpec is one tool as an extension's init declares it.
type ToolSpec struct {
	Name             string          `json:"name"`
	Label            string          `json:"label,omitempty"`
	Description      string          `json:"description"`
	Parameters       json.RawMessage `json:"parameters"`
	PromptSnippet    string          `json:"promptSnippet,omitempty"`
	PromptGuidelines []string        `json:"promptGuidelines,omitempty"`
	ExecutionMode    string          `json:"executionMode,omitempty"`
	// Render says the TUI draws its calls with tool.render (ABI 1.2).
	Render bool `json:"render,omitempty"`
}

// Info describes a loaded (or inspected) extension: what its init declared
// and what the host granted it.
type Info struct {
	Name        string     `json:"name"`
	Version     string     `json:"version"`
	Description string     `json:"description,omitempty"`
	Tools       []ToolSpec `json:"tools"`
	Hooks       []string   `json:"hooks"`
	// Wants is what the extension says it needs (init's "wants"), to show
	// at install time; it grants nothing.
	Wants  Grants `json:"wants"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	// Grants is what the host actually granted, FS entries resolved to
	// absolute paths.
	Grants Grants `json:"grants"`
	Scope  string `json:"scope,omitempty"`
	// Commands are its slash commands (ABI 1.1).
	Commands []CommandSpec `json:"commands,omitempty"`
	// Events are the event types it subscribed to with the event hook (the
	// default six when its init named none); empty without the hook.
	Events []string `json:"events,omitempty"`
	// ConfigSchema is the JSON Schema its init gave for its config (ABI
	// 1.1); nil when none.
	ConfigSchema json.RawMessage `json:"configSchema,omitempty"`
	// Shortcuts are its TUI keys (ABI 1.2).
	Shortcuts []ShortcutSpec `json:"shortcuts,omitempty"`
	// MessageRenderers are the custom message types it draws (ABI 1.2).
	MessageRenderers []string `json:"messageRenderers,omitempty"`
	// Flags are its command-line flags and Channels the bus channels it
	// takes (ABI 1.2).
	Flags    []FlagSpec `json:"flags,omitempty"`
	Channels []string   `json:"channels,omitempty"`
}

// CommandSpec is one slash command as an extension's init declares it.
type CommandSpec struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	ArgumentHint string `json:"argumentHint,omitempty"`
}

// Hook names an extension may declare in init (internal/abi's).
const (
	HookToolCall   = abi.HookToolCall
	HookToolResult = abi.HookToolResult
	HookBashSpawn  = abi.HookBashSpawn
	HookEvent      = abi.HookEvent
	// ABI 1.1.
	HookInput            = abi.HookInput
	HookBeforeAgentStart = abi.HookBeforeAgentStart
	HookStop             = abi.HookStop
)

// nameRule adapts one of runtime/extspec's name rules to the
// MatchString call the init decoder makes.
type nameRule func(string) bool

// MatchString reports whether s follows the rule.
func (r nameRule) MatchString(s string) bool { return r(s) }

// The name rules, from runtime/extspec (the one owner).
var (
	extNameRE  = nameRule(extspec.ValidName)
	toolNameRE = nameRule(extspec.ValidToolName)
)

// limitsOf checks l with extspec's bounds and resolves its defaults.
func limitsOf(l Limits) (memPages uint32, exec, hook time.Duration, err error) {
	if err := l.Check(); err != nil {
		return 0, 0, 0, err
	}
	return l.MemoryPages(), l.ExecuteTimeout(), DefaultHookTimeout, nil
}
