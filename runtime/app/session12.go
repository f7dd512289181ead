package app

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/session"
)

// This file is the runtime's part of ABI 1.2's conversation side: the
// conversation that answers the extensions' session.* and agent.* host
// methods (bound by runtime/conversation), the hooks context, user_bash
// and session_before_*, the session events, and the session kept in
// memory when no conversation keeps one (pi tool call, the test kit).

// ExtConversation is what a conversation gives the extensions' session.*
// and agent.* host methods (extensions.Conversation).
type ExtConversation = extensions.Conversation

// The wire's shapes a conversation answers with and hooks with.
type (
	ExtSessionInfo             = extensions.SessionInfo
	ExtContextUsage            = extensions.ContextUsage
	ExtSendMessageParams       = extensions.SendMessageParams
	ExtAgentState              = extensions.AgentState
	SessionBefore              = extensions.SessionBefore
	UserBash                   = extensions.UserBash
	SessionBeforeSwitchParams  = extensions.SessionBeforeSwitchParams
	SessionBeforeForkParams    = extensions.SessionBeforeForkParams
	SessionBeforeTreeParams    = extensions.SessionBeforeTreeParams
	SessionBeforeCompactParams = extensions.SessionBeforeCompactParams
	SessionSwitchEvent         = extensions.SessionSwitchEvent
	SessionForkEvent           = extensions.SessionForkEvent
	SessionCompactEvent        = extensions.SessionCompactEvent
	SessionTreeEvent           = extensions.SessionTreeEvent
)

// Hook names, event types and delivery modes of ABI 1.2's conversation
// side.
const (
	HookContext              = extensions.HookContext
	HookUserBash             = extensions.HookUserBash
	HookSessionBeforeSwitch  = extensions.HookSessionBeforeSwitch
	HookSessionBeforeFork    = extensions.HookSessionBeforeFork
	HookSessionBeforeCompact = extensions.HookSessionBeforeCompact
	HookSessionBeforeTree    = extensions.HookSessionBeforeTree
	EventSessionSwitch       = extensions.EventSessionSwitch
	EventSessionFork         = extensions.EventSessionFork
	EventSessionCompact      = extensions.EventSessionCompact
	EventSessionTree         = extensions.EventSessionTree
	DeliverSteer             = extensions.DeliverSteer
	DeliverFollowUp          = extensions.DeliverFollowUp
	DeliverNextTurn          = extensions.DeliverNextTurn
)

// conv12 is the runtime's ABI 1.2 conversation state.
type conv12 struct {
	// conv answers session.* and agent.* (BindConversation).
	conv atomic.Pointer[ExtConversation]
	// mem is the session kept in memory for session.append and
	// session.entries when no conversation binds one.
	memOnce sync.Once
	mem     *session.Session
	memErr  error
	// eventCtx, when set, is the context events are sent to extensions
	// with: that of a host call that changes the session (its caller is
	// busy and skipped, WithEventContext).
	eventCtx atomic.Pointer[context.Context]
}

// BindConversation makes c answer the extensions' session.* and agent.*
// host methods; nil unbinds it (they then answer "no session").
func (r *Runtime) BindConversation(c ExtConversation) {
	if c == nil {
		r.c12.conv.Store(nil)
		return
	}
	r.c12.conv.Store(&c)
}

// WithEventContext runs fn with events sent to extensions under ctx: the
// extension whose host call ctx is (busy until fn returns) does not get
// the events fn causes, as with tool.call, instead of waiting for itself.
func (r *Runtime) WithEventContext(ctx context.Context, fn func()) {
	prev := r.c12.eventCtx.Swap(&ctx)
	defer r.c12.eventCtx.Store(prev)
	fn()
}

// eventContext is the context events go to extensions with.
func (r *Runtime) eventContext() context.Context {
	if p := r.c12.eventCtx.Load(); p != nil {
		return *p
	}
	return context.Background()
}

// memorySession is the session in memory that session.append and
// session.entries use when no conversation binds one (pi tool call, the
// test kit, an embedder without a conversation): entries live until pi
// exits.
func (r *Runtime) memorySession() (*session.Session, error) {
	r.c12.memOnce.Do(func() {
		r.c12.mem, r.c12.memErr = session.Create(session.CreateOptions{Cwd: r.cwd, InMemory: true})
	})
	return r.c12.mem, r.c12.memErr
}

func (s extSession) conv() (ExtConversation, error) {
	p := s.r.c12.conv.Load()
	if p == nil {
		return nil, errNoSession
	}
	return *p, nil
}

var _ ExtConversation = extSession{}

func (s extSession) SessionInfo(ctx context.Context) (ExtSessionInfo, error) {
	c, err := s.conv()
	if err != nil {
		return ExtSessionInfo{}, err
	}
	return c.SessionInfo(ctx)
}

func (s extSession) SessionBranch(ctx context.Context, limit int) ([]json.RawMessage, error) {
	c, err := s.conv()
	if err != nil {
		return nil, err
	}
	return c.SessionBranch(ctx, limit)
}

func (s extSession) SessionTree(ctx context.Context) ([]json.RawMessage, error) {
	c, err := s.conv()
	if err != nil {
		return nil, err
	}
	return c.SessionTree(ctx)
}

func (s extSession) SetSessionName(ctx context.Context, name string) error {
	c, err := s.conv()
	if err != nil {
		return err
	}
	return c.SetSessionName(ctx, name)
}

func (s extSession) SetLabel(ctx context.Context, entryID, label string) error {
	c, err := s.conv()
	if err != nil {
		return err
	}
	return c.SetLabel(ctx, entryID, label)
}

func (s extSession) ContextUsage(ctx context.Context) (ExtContextUsage, error) {
	c, err := s.conv()
	if err != nil {
		return ExtContextUsage{}, err
	}
	return c.ContextUsage(ctx)
}

func (s extSession) CompactLater(ctx context.Context, extension, instructions string) error {
	c, err := s.conv()
	if err != nil {
		return err
	}
	return c.CompactLater(ctx, extension, instructions)
}

// sessionChange runs a session change of a host call with its events
// under the call's context.
func (s extSession) sessionChange(ctx context.Context, fn func(c ExtConversation) (bool, error)) (cancelled bool, err error) {
	c, err := s.conv()
	if err != nil {
		return false, err
	}
	s.r.WithEventContext(ctx, func() { cancelled, err = fn(c) })
	return cancelled, err
}

func (s extSession) NewSession(ctx context.Context, extension string) (bool, error) {
	return s.sessionChange(ctx, func(c ExtConversation) (bool, error) { return c.NewSession(ctx, extension) })
}

func (s extSession) SwitchSession(ctx context.Context, extension, path string) (bool, error) {
	return s.sessionChange(ctx, func(c ExtConversation) (bool, error) { return c.SwitchSession(ctx, extension, path) })
}

func (s extSession) ForkSession(ctx context.Context, extension, entryID string) (bool, error) {
	return s.sessionChange(ctx, func(c ExtConversation) (bool, error) { return c.ForkSession(ctx, extension, entryID) })
}

func (s extSession) Navigate(ctx context.Context, extension, targetID string, summarize bool) (bool, error) {
	return s.sessionChange(ctx, func(c ExtConversation) (bool, error) { return c.Navigate(ctx, extension, targetID, summarize) })
}

func (s extSession) SendUserMessage(ctx context.Context, extension string, content json.RawMessage, deliverAs string) error {
	c, err := s.conv()
	if err != nil {
		return err
	}
	return c.SendUserMessage(ctx, extension, content, deliverAs)
}

func (s extSession) SendMessage(ctx context.Context, extension string, p ExtSendMessageParams) error {
	c, err := s.conv()
	if err != nil {
		return err
	}
	return c.SendMessage(ctx, extension, p)
}

func (s extSession) Abort(ctx context.Context) error {
	c, err := s.conv()
	if err != nil {
		return err
	}
	return c.Abort(ctx)
}

func (s extSession) AgentState(ctx context.Context) (ExtAgentState, error) {
	c, err := s.conv()
	if err != nil {
		return ExtAgentState{}, err
	}
	return c.AgentState(ctx)
}

// HasExtensionHook reports whether a loaded extension declared the hook
// name (HookContext, HookUserBash, HookSessionBefore...).
func (r *Runtime) HasExtensionHook(name string) bool {
	host := r.extHost()
	return host != nil && host.HasHook(name)
}

// redactedParams marshals v with the key removed.
func (r *Runtime) redactedParams(v any) (json.RawMessage, error) {
	return redactedJSON(r.redactor, v)
}

// SessionBeforeHook runs the extensions' hook (a HookSessionBefore*
// name) with params (redacted first) in load order; the extension whose
// host call ctx is (the caller) is skipped. See
// extensions.Host.SessionBeforeHook.
func (r *Runtime) SessionBeforeHook(ctx context.Context, hook string, params any) SessionBefore {
	host := r.extHost()
	if host == nil || !host.HasHook(hook) {
		return SessionBefore{}
	}
	raw, err := r.redactedParams(params)
	if err != nil {
		r.logger.Warn("extension hook not called", "hook", hook, "error", err.Error())
		return SessionBefore{}
	}
	return host.SessionBeforeHook(ctx, hook, raw)
}

// ContextHook runs the extensions' context hooks on the messages of a
// model request (redacted, as the session file holds them); see
// extensions.Host.ContextHook.
func (r *Runtime) ContextHook(ctx context.Context, msgs []json.RawMessage, check func([]json.RawMessage) error) ([]json.RawMessage, bool) {
	host := r.extHost()
	if host == nil || !host.HasHook(HookContext) {
		return msgs, false
	}
	red := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		red[i] = r.redactor.Bytes(m)
	}
	return host.ContextHook(ctx, red, check)
}

// UserBashHook runs the extensions' user_bash hooks on a command a person
// typed; see extensions.Host.UserBashHook.
func (r *Runtime) UserBashHook(ctx context.Context, command string) UserBash {
	host := r.extHost()
	if host == nil || !host.HasHook(HookUserBash) {
		return UserBash{Command: command}
	}
	return host.UserBashHook(ctx, r.redactor.String(command), r.cwd)
}

// SessionEvent sends one of ABI 1.2's session events (EventSession*; ev a
// Session*Event with its Type set), redacted, to the extensions that
// listed it.
func (r *Runtime) SessionEvent(ctx context.Context, typ string, ev any) {
	host := r.extHost()
	if host == nil || !host.TakesEvent(typ) {
		return
	}
	raw, err := r.redactedParams(ev)
	if err != nil {
		r.logger.Warn("extension event not sent", "type", typ, "error", err.Error())
		return
	}
	host.SessionEvent(ctx, typ, raw)
}
