package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/internal/abi"
)

// confirmMargin is how long before the current call's deadline ui.confirm
// gives up, so that the guest gets its "timeout" answer in time to use it.
const confirmMargin = 500 * time.Millisecond

// notify answers ui.notify: shown by the UI, else logged.
func (e *Extension) notify(p abi.NotifyParams) error {
	lv := hclog.Info
	switch p.Level {
	case "", "info":
		p.Level = "info"
	case "warning":
		lv = hclog.Warn
	case "error":
		lv = hclog.Error
	default:
		return fmt.Errorf("ui.notify: level %q must be info, warning or error", p.Level)
	}
	if ui := e.host.opts.UI; ui != nil {
		ui.Notify(e.name, p.Message, p.Level)
		return nil
	}
	e.logger.Log(lv, "notify: "+p.Message)
	return nil
}

// confirm answers ui.confirm: without a person at once {false, "no-ui"};
// else the person's answer, or {false, "timeout"} when timeoutMs or the
// current call's deadline (less a margin) passes first.
func (e *Extension) confirm(ctx context.Context, p abi.ConfirmParams) (abi.ConfirmResult, error) {
	ui := e.host.opts.UI
	if ui == nil {
		return abi.ConfirmResult{Confirmed: false, Reason: "no-ui"}, nil
	}
	if p.TimeoutMS < 0 {
		return abi.ConfirmResult{}, errors.New("ui.confirm: timeoutMs must not be negative")
	}
	cctx, cancel := dialogContext(ctx, p.TimeoutMS)
	defer cancel()
	yes, err := ui.Confirm(cctx, e.name, p.Title, p.Message)
	switch {
	case cctx.Err() != nil && ctx.Err() == nil:
		return abi.ConfirmResult{Confirmed: false, Reason: "timeout"}, nil
	case err != nil:
		return abi.ConfirmResult{}, fmt.Errorf("ui.confirm: %w", err)
	}
	return abi.ConfirmResult{Confirmed: yes}, nil
}

// dialogContext is ctx for a question to the person: it ends at timeoutMs
// (when above 0) or shortly before the current call's deadline, whichever
// comes first, so that the guest gets its "timeout" answer in time.
func dialogContext(ctx context.Context, timeoutMS int64) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if ok {
		deadline = deadline.Add(-min(confirmMargin, time.Until(deadline)/10))
	}
	if timeoutMS > 0 {
		if d := time.Now().Add(time.Duration(timeoutMS) * time.Millisecond); !ok || d.Before(deadline) {
			deadline, ok = d, true
		}
	}
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline)
}

// ErrNoSession is the answer of the session methods when the host has
// nowhere to keep them: no Options.Session (session.append and
// session.entries), or no conversation behind it (ABI 1.2's session.* and
// agent.*). pi's runtime keeps 1.1's entries in memory when no session
// file is kept, so they never answer it there.
var ErrNoSession = errors.New("no session")

// sessionCall answers session.append and session.entries through
// Options.Session; without one, or when it has none, "no session".
func (e *Extension) sessionCall(ctx context.Context, method string, params []byte) ([]byte, error) {
	s := e.host.opts.Session
	if s == nil {
		return nil, ErrNoSession
	}
	switch method {
	case abi.HostMethodSessionAppend:
		var p abi.SessionAppendParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if p.CustomType == "" {
			return nil, errors.New("session.append: params need a customType")
		}
		id, err := s.AppendCustom(ctx, e.name, p.CustomType, p.Data)
		switch {
		case errors.Is(err, ErrNoSession):
			return nil, ErrNoSession
		case err != nil:
			return nil, fmt.Errorf("session.append: %w", err)
		}
		return encodeOK(abi.SessionAppendResult{ID: id}), nil
	default:
		var p abi.SessionEntriesParams
		if !isNull(params) {
			if err := decodeParams(method, params, &p); err != nil {
				return nil, err
			}
		}
		ents, err := s.CustomEntries(ctx, e.name, p.CustomType)
		switch {
		case errors.Is(err, ErrNoSession):
			return nil, ErrNoSession
		case err != nil:
			return nil, fmt.Errorf("session.entries: %w", err)
		}
		out := abi.SessionEntriesResult{Entries: []abi.SessionEntry{}}
		for _, en := range ents {
			out.Entries = append(out.Entries, abi.SessionEntry{ID: en.ID, CustomType: en.CustomType, Data: en.Data})
		}
		return encodeOK(out), nil
	}
}

// hostMethods11 are the host methods ABI 1.1 adds.
var hostMethods11 = []string{
	abi.HostMethodKVGet, abi.HostMethodKVSet, abi.HostMethodKVDelete, abi.HostMethodKVList,
	abi.HostMethodHTTP, abi.HostMethodToolCall, abi.HostMethodNotify, abi.HostMethodConfirm,
	abi.HostMethodSessionAppend, abi.HostMethodSessionEntries,
}

// handleHostCall11 answers the host methods of ABI 1.1; ok is false for
// another method. Every problem is an error answer, never a trap.
func (e *Extension) handleHostCall11(ctx context.Context, method string, params []byte) (out []byte, ok bool) {
	answer := func(b []byte, err error) ([]byte, bool) {
		if err != nil {
			return encodeErr(err.Error()), true
		}
		return b, true
	}
	switch method {
	case abi.HostMethodKVGet, abi.HostMethodKVSet, abi.HostMethodKVDelete, abi.HostMethodKVList:
		return answer(e.kvCall(method, params))
	case abi.HostMethodHTTP:
		var p abi.HTTPParams
		if err := decodeParams(method, params, &p); err != nil {
			return answer(nil, err)
		}
		res, err := e.httpRequest(ctx, p)
		if err != nil {
			return answer(nil, err)
		}
		return answer(encodeOK(res), nil)
	case abi.HostMethodToolCall:
		var p abi.ToolCallHostParams
		if err := decodeParams(method, params, &p); err != nil {
			return answer(nil, err)
		}
		res, err := e.toolCall(ctx, p)
		if err != nil {
			return answer(nil, err)
		}
		return answer(encodeOK(res), nil)
	case abi.HostMethodNotify:
		var p abi.NotifyParams
		if err := decodeParams(method, params, &p); err != nil {
			return answer(nil, err)
		}
		return answer(encodeOK(abi.EmptyResult{}), e.notify(p))
	case abi.HostMethodConfirm:
		var p abi.ConfirmParams
		if err := decodeParams(method, params, &p); err != nil {
			return answer(nil, err)
		}
		res, err := e.confirm(ctx, p)
		if err != nil {
			return answer(nil, err)
		}
		return answer(encodeOK(res), nil)
	case abi.HostMethodSessionAppend, abi.HostMethodSessionEntries:
		return answer(e.sessionCall(ctx, method, params))
	}
	return nil, false
}

// UI is the person behind a front end, for ui.notify and ui.confirm (and
// nothing else: asks of tool_call hooks go through the tool pipeline's
// approval). Implementations must be safe for concurrent use.
type UI interface {
	// Notify shows a message from an extension; level is info, warning or
	// error.
	Notify(extension, message, level string)
	// Confirm asks the person a yes/no question; it gives up when ctx
	// ends (the host then answers "timeout").
	Confirm(ctx context.Context, extension, title, message string) (bool, error)
}

// Session is where session.append and session.entries go: the current
// session's branch. It is a seam for the sessions package; a host without
// one answers "no session".
type Session interface {
	// AppendCustom adds a custom entry on the current branch and returns
	// its id.
	AppendCustom(ctx context.Context, extension, customType string, data json.RawMessage) (string, error)
	// CustomEntries lists the custom entries along the current branch,
	// oldest first; customType "" is every type.
	CustomEntries(ctx context.Context, extension, customType string) ([]SessionEntry, error)
}

// SessionEntry is one custom entry of a session.
type SessionEntry struct {
	ID         string
	CustomType string
	Data       json.RawMessage
}
