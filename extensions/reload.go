package extensions

import (
	"context"
	"errors"
	"fmt"
	"reflect"
)

// Restart is the core of pi.reload (ABI 1.2): every extension's live
// instance ends (its timers, watches and components with it; the tools
// it registered with tools.register are unregistered through Controls)
// and a fresh instance starts, whose init runs again. The module is the
// one compiled at load (pi.toml and the file are not read again), so init
// answers as at load; an extension whose fresh init declares other
// tools, hooks or commands keeps what it registered at load, and its
// error says so. A disabled or closed extension is left as it is.
//
// # Errors
//
// Each extension that did not start afresh (a fault, a different init),
// joined; the others restarted.
func (h *Host) Restart(ctx context.Context) error {
	var errs []error
	for _, e := range h.Extensions() {
		if err := e.restart(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (e *Extension) restart(ctx context.Context) error {
	if err := e.mu.LockContext(ctx); err != nil {
		return fmt.Errorf("extension %s: reload: it stayed busy with another call: %w", e.name, err)
	}
	defer e.mu.Unlock()
	if e.closed || e.disabled.Load() {
		return nil
	}
	e.discard(ctx)
	e.runMu.Lock()
	late := e.registered
	e.registered = nil
	e.runMu.Unlock()
	if c := e.host.opts.Controls; c != nil && len(late) > 0 {
		c.UnregisterTools(late)
	}
	res, err := e.start(ctx)
	if err != nil {
		return e.fault(ctx, "init", fmt.Errorf("reload: starting a fresh instance: %w", err))
	}
	e.faults = 0
	if first, err := decodeInit(e.initRaw); err == nil && !reflect.DeepEqual(first, res) {
		e.logger.Warn("reload: init answered differently from the start; the tools, hooks and commands of the start stay until pi restarts")
		return fmt.Errorf("extension %s: reload: init declares other tools, hooks or commands than at start; restart pi for them", e.name)
	}
	e.logger.Info("reloaded: a fresh instance started")
	return nil
}
