package app

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/pi-go/pi/runtime/agent"
)

// This file is pi.reload (ABI 1.2) and the /reload command: pi.toml and
// the extensions' module files are read again and the new set of
// extensions takes the place of the old one in the running runtime, or,
// when anything about the new set fails, the old one stays as it was.

// reloadState is what pi.reload keeps across sets of extensions.
type reloadState struct {
	// mu makes reloads one at a time.
	mu sync.Mutex
	// flags are the extensions' flags given on the command line
	// (SetExtensionFlags), handed to each new set.
	flags map[string]string
}

// Reload reads pi.toml again (the same files and the same trust as at
// start: an untrusted project gains nothing it would not at start) and
// loads every extension it and the options (-e) ask for, reading each
// module file again: added extensions load, removed ones end, changed
// grants, limits and config apply, a rebuilt module runs its new code.
// When all of them loaded, the new set takes the old one's place in one
// step: the tool registry (built-in tools, extensions' tools, the
// disabled ones' stand-ins, the MCP servers' tools, the active set by
// [tools] active or --tools), the hooks of tool calls (with the
// permission rules and approvals of the start), bash's spawn hooks,
// commands, flags (the values given at start), shortcuts, renderers and
// the events. Before that, shutdown, when not nil, is sent to the old
// extensions that take it and the old set ends (its timers, watches,
// components and tools.register tools with it). Plan mode stays as it
// was.
//
// What Reload does not read again: [model], [sandbox], [tools.bash],
// [permissions], [compaction] and [[mcp]] keep their values of the start
// (the skills and prompt templates are the conversation's, which finds
// them again)
// (Config still answers the start's configuration).
//
// Call it while no run goes on; a conversation rebuilds its agent after
// it (conversation.Conversation.Reload does both and sends session_start
// with reason "reload").
//
// # Errors
//
// A pi.toml that does not load (with its file, line and key), an
// extension that fails to load (with its name and why: a missing or
// invalid module, a sha256 that is not pinned, a grant that is refused),
// two tools of one name. The extensions loaded before then stay, as
// they were (no instance restarted), and every extension of the failed
// set is closed again.
func (r *Runtime) Reload(ctx context.Context, shutdown *agent.Event) error {
	r.reload.mu.Lock()
	defer r.reload.mu.Unlock()
	cfg, err := r.readConfig()
	if err != nil {
		return fmt.Errorf("reload: %w; the extensions loaded before stay", err)
	}
	set, err := r.loadExtensions(ctx, cfg)
	if err == nil {
		err = r.giveFlags(set)
	}
	if err == nil {
		_, err = r.buildTools(set) // two tools of one name: before anything changes
	}
	if err != nil {
		set.close()
		return fmt.Errorf("reload: %w; the extensions loaded before stay", err)
	}
	for _, w := range cfg.Warnings {
		r.warn(w)
	}
	// The old set ends before the new one is installed, so that no late
	// call of an old instance (a timer's tools.register) reaches the new
	// registry; meanwhile the old host answers as a closed one.
	if old := r.extHost(); old != nil {
		if shutdown != nil && old.TakesEvent(string(shutdown.Type)) {
			if raw, jerr := redactedJSON(r.redactor, shutdown); jerr == nil {
				old.Event(r.eventContext(), raw)
			}
		}
		extSet{host: old}.close()
	}
	r.hostp.Store(set.host)
	r.planMu.Lock()
	err = r.installTools(set)
	if err == nil && r.plan.Load() {
		r.planSaved = r.registry.ActiveNames()
		planned := slices.DeleteFunc(slices.Clone(r.planSaved), func(n string) bool { return n == "write" || n == "edit" })
		err = r.registry.SetActive(planned)
	}
	r.planMu.Unlock()
	r.recordStartActive()
	if err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	r.logger.Info("reloaded: pi.toml and the extensions read again", "extensions", len(r.Extensions()))
	return nil
}

// giveFlags hands set's extensions the values of their flags given on the
// command line at start; a flag no extension of the set declares any
// more is dropped (logged).
func (r *Runtime) giveFlags(set extSet) error {
	if set.host == nil || len(r.reload.flags) == 0 {
		return nil
	}
	vals := map[string]string{}
	for n, v := range r.reload.flags {
		if declared, _ := set.host.FlagIsBoolean(n); declared {
			vals[n] = v
		} else {
			r.logger.Info("reload: no extension declares flag --"+n+" any more; its value is dropped", "flag", n)
		}
	}
	return set.host.SetFlagValues(vals)
}
