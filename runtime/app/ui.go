package app

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

// NotifyLevel is the kind of a notification: "info", "warning" or "error".
type NotifyLevel string

// The notification levels.
const (
	NotifyInfo    NotifyLevel = "info"
	NotifyWarning NotifyLevel = "warning"
	NotifyError   NotifyLevel = "error"
)

// UI is how the runtime asks and tells the person in front of a front end:
// a terminal, or the client of `pi --mode rpc` (its extension UI
// sub-protocol). The approval of calls (Options.Approver, UIApprover)
// and the extension host methods ui.confirm and ui.notify go through it.
// Its methods may be called from several goroutines at once.
type UI interface {
	// Confirm asks a yes/no question; false when the person says no or
	// dismisses it, or ctx ends first.
	Confirm(ctx context.Context, title, message string) (bool, error)
	// Select asks the person to pick one of options; ok is false when
	// they dismiss it, or ctx ends first.
	Select(ctx context.Context, title string, options []string) (choice string, ok bool, err error)
	// Input asks for a line of text; ok is false when the person dismisses
	// it, or ctx ends first.
	Input(ctx context.Context, title, placeholder string) (value string, ok bool, err error)
	// Notify shows a message and returns at once.
	Notify(message string, level NotifyLevel)
}

// UI is the front end's UI (Options.UI); without one, a UI with no person
// behind it: Confirm, Select and Input answer no, and Notify logs.
func (r *Runtime) UI() UI {
	if r.opts.UI != nil {
		return r.opts.UI
	}
	return headlessUI{r}
}

type headlessUI struct{ r *Runtime }

func (headlessUI) Confirm(context.Context, string, string) (bool, error) { return false, nil }
func (headlessUI) Select(context.Context, string, []string) (string, bool, error) {
	return "", false, nil
}
func (headlessUI) Input(context.Context, string, string) (string, bool, error) { return "", false, nil }
func (h headlessUI) Notify(message string, level NotifyLevel) {
	switch level {
	case NotifyError:
		h.r.logger.Error(message)
	case NotifyWarning:
		h.r.logger.Warn(message)
	default:
		h.r.logger.Info(message)
	}
}

// UIApprover asks about a call with ui.Confirm: the title names the tool,
// the message holds the questions and what the call does (a bash command as
// it is, other arguments as JSON, cut at 300 bytes). Yes approves this call
// once; no, a dismissal or an ended ctx declines it.
func UIApprover(ui UI) Approver {
	return ApproverFunc(func(ctx context.Context, req tool.ApprovalRequest) (ApprovalAnswer, error) {
		msg := strings.Join(req.Questions, "\n") + "\n\n" + CallSummary(req.Call)
		ok, err := ui.Confirm(ctx, "Allow "+req.Call.Name+"?", msg)
		if err != nil || !ok {
			return Decline, err
		}
		return ApproveOnce, nil
	})
}

// CallSummary is what a person needs to see of a call to approve it: a
// bash command as it is (after "$ "), other arguments as compact JSON, cut
// at 300 bytes.
func CallSummary(c tool.CallInfo) string {
	var args struct {
		Command *string `json:"command"`
	}
	s := string(c.Input)
	if json.Unmarshal(c.Input, &args) == nil && args.Command != nil {
		s = "$ " + *args.Command
	}
	if len(s) > 300 {
		cut := 300
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// extensionUI is the front end's UI as extensions' ui.notify and
// ui.confirm see it (each message names the extension); nil when no person
// is there, so the host answers confirm with "no-ui" at once and logs
// notifications.
func (r *Runtime) extensionUI() extensions.UI {
	if r.opts.UI == nil {
		return nil
	}
	if x, ok := r.opts.UI.(ExtensionUI); ok {
		return extUI12{extUI: extUI{r.opts.UI}, x: x, rt: r, comps: &componentMap{}}
	}
	return extUI{r.opts.UI}
}

type extUI struct{ ui UI }

func (u extUI) Notify(extension, message, level string) {
	u.ui.Notify("["+extension+"] "+message, NotifyLevel(level))
}

func (u extUI) Confirm(ctx context.Context, extension, title, message string) (bool, error) {
	return u.ui.Confirm(ctx, "["+extension+"] "+title, message)
}
