package conversation

import (
	"context"
	"fmt"
	"strings"

	"github.com/pi-go/pi/runtime/app"
)

// PlanMode reports whether plan mode is on (app.Runtime.SetPlanMode).
func (c *Conversation) PlanMode() bool { return c.rt.PlanMode() }

// SetPlanMode turns plan mode on or off (--plan, /plan, RPC set_mode):
// read-only tools, bash under the read-only sandbox and a note in the
// system prompt; off restores the tools as they were. The next prompt
// gets the new tools and system prompt.
//
// # Errors
//
// agent.ErrBusy while the agent runs; app.ErrPlanNeedsSandbox where the
// kernel cannot sandbox bash.
func (c *Conversation) SetPlanMode(on bool) error {
	if err := c.idle("plan mode"); err != nil {
		return err
	}
	if err := c.rt.SetPlanMode(on); err != nil {
		return fmt.Errorf("plan mode: %w", err)
	}
	c.dropAgent()
	return nil
}

// cmdPlan is /plan [on|off]: without an argument it switches.
func cmdPlan(_ context.Context, c *Conversation, args string, o SubmitOptions, _ *Submitted) error {
	on := !c.PlanMode()
	switch strings.TrimSpace(args) {
	case "":
	case "on":
		on = true
	case "off":
		on = false
	default:
		return fmt.Errorf("/plan takes on, off or nothing, got %q", args)
	}
	if err := c.SetPlanMode(on); err != nil {
		return err
	}
	if on {
		o.show("Plan mode on: write and edit are off, bash runs read-only (/plan again to leave).")
	} else {
		o.show("Plan mode off: the tools are back as they were.")
	}
	return nil
}

// planPrompt is what plan mode adds to the system prompt.
func (c *Conversation) planPrompt() string {
	if !c.PlanMode() {
		return c.opts.AppendSystemPrompt
	}
	if c.opts.AppendSystemPrompt == "" {
		return app.PlanNote
	}
	return c.opts.AppendSystemPrompt + "\n\n" + app.PlanNote
}
