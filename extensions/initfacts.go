package extensions

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/extspec"
)

// This file holds what init tells an extension beyond ABI 1.0 (the facts:
// the ABI's minor version, project root, trust, mode, whether a person can
// answer) and how the host takes the 1.1 fields of its answer (the prompt
// hooks, the event subscription, commands, configSchema).

// The modes an extension's init is told (Options.Mode), the wire's values.
const (
	ModeInteractive = abi.ModeInteractive
	ModePrint       = abi.ModePrint
	ModeJSON        = abi.ModeJSON
	ModeRPC         = abi.ModeRPC
	ModeTool        = abi.ModeTool
	ModeInspect     = abi.ModeInspect
)

// ext11 is an extension's ABI 1.1 state, set once by initialize11.
type ext11 struct {
	hookInput, hookBeforeStart, hookStop bool
	events                               map[string]bool // subscribed event types (with the event hook)
	callSeq                              atomic.Int64    // ids of tool.call calls
}

// initFacts adds ABI 1.1's facts to init's params.
func initFacts(p abi.InitParams, opts Options) abi.InitParams {
	p.ABIMinor = abi.Minor
	p.ProjectRoot = opts.ProjectRoot
	if p.ProjectRoot == "" {
		p.ProjectRoot = opts.Cwd
	}
	p.Trusted = opts.Trusted
	p.Mode = opts.Mode
	if p.Mode == "" {
		p.Mode = abi.ModePrint
	}
	p.HasUI = opts.UI != nil
	p.TUI = opts.TUI
	return p
}

// checkInit11 checks init's 1.1 fields: command names (well formed, not
// twice, not built in), event types, and that configSchema compiles.
func checkInit11(r abi.InitResult) error {
	seen := map[string]bool{}
	for i, c := range r.Commands {
		switch {
		case !extspec.ValidCommandName(c.Name):
			return fmt.Errorf("commands[%d]: name %q must match [a-z][a-z0-9-]* (without the slash)", i, c.Name)
		case seen[c.Name]:
			return fmt.Errorf("commands[%d]: command /%s declared twice", i, c.Name)
		case slices.Contains(BuiltinCommands, c.Name):
			return fmt.Errorf("command /%s clashes with the built-in command /%s", c.Name, c.Name)
		}
		seen[c.Name] = true
	}
	for i, t := range r.Events {
		if !abi.IsEventType11(t) && !abi.IsSessionEvent12(t) {
			return fmt.Errorf("events[%d]: unknown event type %q (known: %s, message_end, session_start, session_shutdown, compaction_start, compaction_end)", i, t, strings.Join(abi.DefaultEvents, ", "))
		}
	}
	if !isNull(r.ConfigSchema) {
		if _, err := compileConfigSchema(r.ConfigSchema); err != nil {
			return err
		}
	}
	return nil
}

// initialize11 takes init's 1.1 answer: the new hooks, the event
// subscription, the commands (refusing the host's reserved names), and
// checks the config against the configSchema.
func (e *Extension) initialize11(res initResult) error {
	for _, hk := range res.Hooks {
		switch hk {
		case HookInput:
			e.hookInput = true
		case HookBeforeAgentStart:
			e.hookBeforeStart = true
		case HookStop:
			e.hookStop = true
		}
	}
	if e.hookEvent {
		types := res.Events
		if types == nil {
			types = abi.DefaultEvents
		}
		e.events = map[string]bool{}
		for _, t := range types {
			e.events[t] = true
			e.info.Events = append(e.info.Events, t)
		}
	}
	for _, c := range res.Commands {
		if slices.Contains(e.host.opts.ReservedCommands, c.Name) {
			return fmt.Errorf("command /%s clashes with the built-in command /%s", c.Name, c.Name)
		}
	}
	e.info.Commands = res.Commands
	e.info.ConfigSchema = res.ConfigSchema
	if res.ConfigSchema != nil {
		if err := ValidateConfig(res.ConfigSchema, e.spec.Config, e.spec.ConfigKey); err != nil {
			return err
		}
	}
	return nil
}
