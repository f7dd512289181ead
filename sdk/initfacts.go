package sdk

import "github.com/pi-go/pi/internal/abi"

// ABI 1.1: what a guest learns at init (the facts, here), what it may offer
// (slash commands in commands.go, a config schema in configschema.go, the
// input, before_agent_start and stop hooks in prompthooks.go, an event
// subscription and asking in a tool_call hook in register.go) and what it
// may call (kv, http, tool.call, ui in hostmethods.go). Everything is
// optional; the SDK sends 1.1 fields in init's answer only when the host
// speaks 1.1 (ABIMinor() >= 1), so an extension built with it still loads
// in a 1.0 host (its 1.1 parts then stay unused, and a warning is logged).

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
