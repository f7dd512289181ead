package extensions

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/pi-go/pi/internal/abi"
)

// Defaults and hard limits of ABI v1.
const (
	// DefaultMemoryMB is the memory limit of an extension whose Limits say 0.
	DefaultMemoryMB = 64
	// MaxMemoryMB is the largest memory limit wasm32 can address (65536 pages).
	MaxMemoryMB = 4096
	// DefaultExecuteTimeout bounds one tool.execute call.
	DefaultExecuteTimeout = 30 * time.Second
	// DefaultHookTimeout bounds init, each hook call and each event.
	DefaultHookTimeout = 5 * time.Second
	// MaxResponseBytes is the largest response pi_call may return; a bigger
	// one is a fault.
	MaxResponseBytes = 16 << 20
	// MaxFaultsInARow is how many consecutive faults disable an extension.
	MaxFaultsInARow = 3
)

// Grants is what an extension may touch. FS entries are "ro:PATH" or
// "rw:PATH", PATH relative to Options.ProjectRoot (or absolute); each is a
// directory mounted at its real absolute path. Exec entries are command
// patterns matched against argv[0] of the `exec` host method (an exact name or
// a path.Match glob). Env entries are names of environment variables the
// guest may read.
type Grants struct {
	FS   []string `json:"fs"`
	Exec []string `json:"exec"`
	Env  []string `json:"env"`
}

// Limits bound an extension; zero values take the defaults.
type Limits struct {
	// MemoryMB caps the guest's linear memory (default 64 MiB).
	MemoryMB int `json:"memoryMB,omitempty"`
	// TimeoutMS bounds each tool.execute call (default 30 s). init (with
	// _initialize), hooks and events are always bounded by 5 s.
	TimeoutMS int `json:"timeoutMS,omitempty"`
}

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
	// Scope is "project", "global" or "flag"; informational.
	Scope string
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
}

// Hook names an extension may declare in init (internal/abi's).
const (
	HookToolCall   = abi.HookToolCall
	HookToolResult = abi.HookToolResult
	HookBashSpawn  = abi.HookBashSpawn
	HookEvent      = abi.HookEvent
)

var (
	extNameRE  = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
)

// limitsOf resolves defaults and checks ranges.
func limitsOf(l Limits) (memPages uint32, exec, hook time.Duration, err error) {
	mb := l.MemoryMB
	switch {
	case mb < 0:
		return 0, 0, 0, fmt.Errorf("limits.memory_mb %d: must not be negative", mb)
	case mb == 0:
		mb = DefaultMemoryMB
	case mb > MaxMemoryMB:
		return 0, 0, 0, fmt.Errorf("limits.memory_mb %d: at most %d (wasm32 addresses 4 GiB)", mb, MaxMemoryMB)
	}
	exec, hook = DefaultExecuteTimeout, DefaultHookTimeout
	switch {
	case l.TimeoutMS < 0:
		return 0, 0, 0, fmt.Errorf("limits.timeout_ms %d: must not be negative", l.TimeoutMS)
	case l.TimeoutMS > 0:
		exec = time.Duration(l.TimeoutMS) * time.Millisecond
	}
	return uint32(mb) * 16, exec, hook, nil // 16 pages of 64 KiB per MiB
}
