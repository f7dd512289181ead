package extensions

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-go/pi/internal/abi"
)

// This file owns ABI 1.2's "where" rule: which guest call a host method is
// made in, and which methods answer only in a command or a shortcut or
// only where there is a conversation.

// ErrCommandOnly is the answer (wrapped, after the method's name) of a
// command/shortcut-only method called elsewhere.
var ErrCommandOnly = errors.New("is only allowed in a command or shortcut")

// methodKey carries the guest method of the call a host function runs in.
type methodKey struct{}

// withMethod records the guest method of the current call in ctx.
func withMethod(ctx context.Context, method string) context.Context {
	return context.WithValue(ctx, methodKey{}, method)
}

// CallMethod is the guest method ("command.execute", "tool.execute",
// "timer.fire", ...) of the call whose host function got ctx; "" outside
// a call.
func CallMethod(ctx context.Context) string {
	m, _ := ctx.Value(methodKey{}).(string)
	return m
}

// InCommand reports whether ctx is a host call made inside a slash
// command (command.execute) or a shortcut (shortcut.execute): where ABI
// 1.2's command-only methods (session.new, switch, fork, navigate,
// pi.shutdown, pi.reload) are allowed.
func InCommand(ctx context.Context) bool {
	switch CallMethod(ctx) {
	case abi.MethodCommand, abi.MethodShortcut:
		return true
	}
	return false
}

// CheckWhere answers the "where" rule for method: an error during init
// (ABI 1.2's methods answer in any call but init), for a
// command-only method outside a command or shortcut, and, when
// conversational (agent.*, session.*, model.*), in the tool and inspect
// modes, which have no conversation.
func (e *Extension) CheckWhere(ctx context.Context, method string, commandOnly, conversational bool) error {
	if CallMethod(ctx) == abi.MethodInit {
		return fmt.Errorf("%s is not available during init", method)
	}
	if conversational {
		switch mode := e.host.opts.Mode; mode {
		case abi.ModeTool, abi.ModeInspect:
			return fmt.Errorf("%s: not available in mode %s", method, mode)
		}
	}
	if commandOnly && !InCommand(ctx) {
		return fmt.Errorf("%s %w", method, ErrCommandOnly)
	}
	return nil
}
