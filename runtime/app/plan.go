package app

import (
	"errors"
	"slices"

	"github.com/pi-go/pi/internal/sandbox"
)

// PlanNote is what the system prompt says in plan mode.
const PlanNote = "Plan mode is on: you cannot change files. The write and edit tools are not available and bash runs " +
	"in a read-only sandbox (reads and builds that write nothing work; every write is refused). Investigate, " +
	"then present a plan for the user to approve; the user leaves plan mode to carry it out."

// ErrPlanNeedsSandbox is SetPlanMode's error where the kernel has no sandbox
// and bash is active: plan mode would be a promise it cannot keep.
var ErrPlanNeedsSandbox = errors.New("plan mode needs the kernel sandbox for bash")

// PlanMode reports whether plan mode is on.
func (r *Runtime) PlanMode() bool { return r.plan.Load() }

// SetPlanMode turns plan mode on or off. On: write and edit leave the
// active set and bash runs under the read-only sandbox whatever [sandbox]
// says; off: the active set is what it was before and bash's sandbox is
// the configured one again. A conversation must rebuild its agent after a
// change (the tools and the system prompt, with PlanNote, change).
//
// # Errors
//
// ErrPlanNeedsSandbox (wrapped, saying what is missing) when bash is
// active and the kernel cannot sandbox it; plan mode then stays off.
func (r *Runtime) SetPlanMode(on bool) error {
	r.planMu.Lock()
	defer r.planMu.Unlock()
	if on == r.plan.Load() {
		return nil
	}
	if !on {
		if err := r.registry.SetActive(r.planSaved); err != nil {
			return err
		}
		r.plan.Store(false)
		return nil
	}
	active := r.registry.ActiveNames()
	if slices.Contains(active, "bash") {
		if sup := ProbeSandbox(); sup.Missing != "" {
			return errors.Join(ErrPlanNeedsSandbox, errors.New(sup.Missing))
		}
	}
	planned := slices.DeleteFunc(slices.Clone(active), func(n string) bool { return n == "write" || n == "edit" })
	if err := r.registry.SetActive(planned); err != nil {
		return err
	}
	r.planSaved = active
	r.plan.Store(true)
	return nil
}

// bashSandbox is the sandbox of the next bash command: the configured
// one, or in plan mode the read-only one.
func (r *Runtime) bashSandbox() *sandbox.Policy {
	box := r.configured()
	if !r.plan.Load() {
		return box
	}
	p := sandbox.Policy{Mode: sandbox.ModeReadOnly, Network: sandbox.NetworkOn}
	if box != nil {
		p = *box
		p.Mode = sandbox.ModeReadOnly
	}
	return &p
}
