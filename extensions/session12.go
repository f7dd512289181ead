package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pi-go/pi/internal/abi"
)

// This file holds the conversation side of ABI 1.2: the session.* and
// agent.* host methods with their "where" rules, and the hooks context,
// user_bash and session_before_* with the session events. The
// conversation itself is behind the Conversation seam (runtime/app binds
// the conversation of runtime/conversation to it).

// Conversation is what the session.* and agent.* host methods act on: the
// conversation pi holds. Options.Session may implement it; a host whose
// session does not answers those methods "no session". extension names the
// calling extension; ctx is the host call's (its chain tells whose hooks
// are skipped).
type Conversation interface {
	SessionInfo(ctx context.Context) (SessionInfo, error)
	// SessionBranch lists the current branch's entries, root to leaf (the
	// last limit when limit > 0), redacted, as the file holds them.
	SessionBranch(ctx context.Context, limit int) ([]json.RawMessage, error)
	// SessionTree lists every entry in file order, redacted.
	SessionTree(ctx context.Context) ([]json.RawMessage, error)
	SetSessionName(ctx context.Context, name string) error
	// SetLabel labels entryID; "" clears its label.
	SetLabel(ctx context.Context, entryID, label string) error
	ContextUsage(ctx context.Context) (ContextUsage, error)
	// CompactLater compacts once the conversation is idle (reason manual).
	CompactLater(ctx context.Context, extension, instructions string) error
	// NewSession, SwitchSession, ForkSession and Navigate run the
	// session_before_* hooks (the caller's own skipped) and report
	// whether one cancelled.
	NewSession(ctx context.Context, extension string) (cancelled bool, err error)
	SwitchSession(ctx context.Context, extension, path string) (cancelled bool, err error)
	ForkSession(ctx context.Context, extension, entryID string) (cancelled bool, err error)
	Navigate(ctx context.Context, extension, targetID string, summarize bool) (cancelled bool, err error)
	// SendUserMessage and SendMessage take params already checked.
	SendUserMessage(ctx context.Context, extension string, content json.RawMessage, deliverAs string) error
	SendMessage(ctx context.Context, extension string, p SendMessageParams) error
	Abort(ctx context.Context) error
	AgentState(ctx context.Context) (AgentState, error)
}

// hostMethodsSession12 are the host methods of this file.
var hostMethodsSession12 = []string{
	abi.HostMethodSessionInfo, abi.HostMethodSessionBranch, abi.HostMethodSessionTree,
	abi.HostMethodSessionSetName, abi.HostMethodSessionSetLabel, abi.HostMethodSessionContextUsage,
	abi.HostMethodSessionCompact, abi.HostMethodSessionNew, abi.HostMethodSessionSwitch,
	abi.HostMethodSessionFork, abi.HostMethodSessionNavigate,
	abi.HostMethodAgentSendUserMessage, abi.HostMethodAgentSendMessage, abi.HostMethodAgentAbort,
	abi.HostMethodAgentState,
}

// commandOnlyMethods may be called only inside command.execute or
// shortcut.execute.
var commandOnlyMethods = []string{abi.HostMethodSessionNew, abi.HostMethodSessionSwitch, abi.HostMethodSessionFork, abi.HostMethodSessionNavigate}

// callerOf is the extension whose host call ctx is: the last of its chain.
func callerOf(ctx context.Context) string {
	chain, _ := ctx.Value(chainKey{}).([]string)
	if len(chain) == 0 {
		return ""
	}
	return chain[len(chain)-1]
}

// handleHostCallSession12 answers the session.* and agent.* host methods
// of ABI 1.2; ok is false for another method.
func (e *Extension) handleHostCallSession12(ctx context.Context, method string, params json.RawMessage) (out []byte, ok bool) {
	if !slices.Contains(hostMethodsSession12, method) {
		return nil, false
	}
	if err := e.CheckWhere(ctx, method, slices.Contains(commandOnlyMethods, method), true); err != nil {
		return encodeErr(err.Error()), true
	}
	conv, _ := e.host.opts.Session.(Conversation)
	if conv == nil {
		return encodeErr(ErrNoSession.Error()), true
	}
	res, err := e.session12(ctx, conv, method, params)
	if err != nil {
		return encodeErr(err.Error()), true
	}
	return encodeOK(res), true
}

// optParams decodes params that may be omitted or null.
func optParams(method string, raw json.RawMessage, v any) error {
	if isNull(raw) {
		return nil
	}
	return decodeParams(method, raw, v)
}

func (e *Extension) session12(ctx context.Context, conv Conversation, method string, params json.RawMessage) (any, error) {
	empty := abi.EmptyResult{}
	cancelled := func(c bool, err error) (any, error) {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		return abi.CancelledResult{Cancelled: c}, nil
	}
	switch method {
	case abi.HostMethodSessionInfo:
		return conv.SessionInfo(ctx)
	case abi.HostMethodSessionBranch:
		var p abi.SessionBranchParams
		if err := optParams(method, params, &p); err != nil {
			return nil, err
		}
		if p.Limit < 0 {
			return nil, fmt.Errorf("%s: limit must not be negative", method)
		}
		ents, err := conv.SessionBranch(ctx, p.Limit)
		return abi.SessionEntriesRawResult{Entries: nonNilRaw(ents)}, err
	case abi.HostMethodSessionTree:
		ents, err := conv.SessionTree(ctx)
		return abi.SessionEntriesRawResult{Entries: nonNilRaw(ents)}, err
	case abi.HostMethodSessionSetName:
		var p abi.SessionSetNameParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		return empty, conv.SetSessionName(ctx, p.Name)
	case abi.HostMethodSessionSetLabel:
		var p abi.SessionSetLabelParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if p.EntryID == "" {
			return nil, fmt.Errorf("%s: params need an entryId", method)
		}
		label := ""
		if p.Label != nil {
			label = *p.Label
		}
		return empty, conv.SetLabel(ctx, p.EntryID, label)
	case abi.HostMethodSessionContextUsage:
		return conv.ContextUsage(ctx)
	case abi.HostMethodSessionCompact:
		var p abi.SessionCompactParams
		if err := optParams(method, params, &p); err != nil {
			return nil, err
		}
		return empty, conv.CompactLater(ctx, e.name, p.CustomInstructions)
	case abi.HostMethodSessionNew:
		return cancelled(conv.NewSession(ctx, e.name))
	case abi.HostMethodSessionSwitch:
		var p abi.SessionSwitchParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if p.SessionPath == "" {
			return nil, fmt.Errorf("%s: params need a sessionPath", method)
		}
		return cancelled(conv.SwitchSession(ctx, e.name, p.SessionPath))
	case abi.HostMethodSessionFork:
		var p abi.SessionForkParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if p.EntryID == "" {
			return nil, fmt.Errorf("%s: params need an entryId", method)
		}
		return cancelled(conv.ForkSession(ctx, e.name, p.EntryID))
	case abi.HostMethodSessionNavigate:
		var p abi.SessionNavigateParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if p.TargetID == "" {
			return nil, fmt.Errorf("%s: params need a targetId", method)
		}
		return cancelled(conv.Navigate(ctx, e.name, p.TargetID, p.Summarize))
	case abi.HostMethodAgentSendUserMessage:
		var p abi.SendUserMessageParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if err := checkContent(method, p.Content); err != nil {
			return nil, err
		}
		switch p.DeliverAs {
		case "", abi.DeliverSteer, abi.DeliverFollowUp:
		default:
			return nil, fmt.Errorf("%s: deliverAs %q must be steer or followUp", method, p.DeliverAs)
		}
		return empty, conv.SendUserMessage(ctx, e.name, p.Content, p.DeliverAs)
	case abi.HostMethodAgentSendMessage:
		var p abi.SendMessageParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if p.CustomType == "" {
			return nil, fmt.Errorf("%s: params need a customType", method)
		}
		if err := checkContent(method, p.Content); err != nil {
			return nil, err
		}
		switch p.DeliverAs {
		case "", abi.DeliverSteer, abi.DeliverFollowUp, abi.DeliverNextTurn:
		default:
			return nil, fmt.Errorf("%s: deliverAs %q must be steer, followUp or nextTurn", method, p.DeliverAs)
		}
		return empty, conv.SendMessage(ctx, e.name, p)
	case abi.HostMethodAgentAbort:
		return empty, conv.Abort(ctx)
	default: // abi.HostMethodAgentState
		return conv.AgentState(ctx)
	}
}

func nonNilRaw(r []json.RawMessage) []json.RawMessage {
	if r == nil {
		return []json.RawMessage{}
	}
	return r
}

// checkContent checks a message's content: a string, or content blocks
// (text or image).
func checkContent(method string, raw json.RawMessage) error {
	if len(raw) == 0 || isNull(raw) {
		return fmt.Errorf("%s: params need a content (a string or content blocks)", method)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return nil
	}
	var blocks []abi.Block
	if err := decodeStrict(raw, &blocks); err != nil {
		return fmt.Errorf("%s: content must be a string or content blocks: %w", method, err)
	}
	if err := checkBlocks(blocksFromABI(blocks)); err != nil {
		return fmt.Errorf("%s: content: %w", method, err)
	}
	return nil
}

// hasHook reports whether e declared the hook name.
func (e *Extension) hasHook(name string) bool { return slices.Contains(e.info.Hooks, name) }

// HasHook reports whether some loaded extension declared the hook name
// (a caller can skip preparing a request nobody takes).
func (h *Host) HasHook(name string) bool {
	for _, e := range h.Extensions() {
		if e.hasHook(name) {
			return true
		}
	}
	return false
}

// SessionBefore is what the session_before_* hooks decided.
type SessionBefore struct {
	// Cancelled: an extension (By) cancelled; Reason is its reason.
	Cancelled  bool
	By, Reason string
	// Summary is a summary (tree) or compaction (compact) an extension
	// (By) gave instead of the model's.
	Summary *abi.HookSummary
}

// SessionBeforeHook runs the hook (HookSessionBeforeSwitch, ...Fork,
// ...Compact, ...Tree) with params in load order. The extension whose host
// call ctx is (the caller of session.new, ...) is skipped. The first
// cancel ends the chain; so does the first summary (tree) or compaction
// (compact) answer, which is then used. A hook that faults or answers an
// error is logged and changes nothing.
func (h *Host) SessionBeforeHook(ctx context.Context, hook string, params any) SessionBefore {
	method := "hook." + hook
	req, err := encodeRequest12(method, params)
	if err != nil {
		h.logger.Warn(method+" not called", "error", err.Error())
		return SessionBefore{}
	}
	caller := callerOf(ctx)
	for _, e := range h.Extensions() {
		if !e.hasHook(hook) || e.name == caller {
			continue
		}
		var r abi.SessionBeforeAnswer
		err := e.hookCall(ctx, method, req, func(raw json.RawMessage) error {
			if err := decodeObject(raw, method, &r); err != nil {
				return err
			}
			switch {
			case r.Summary != nil && hook != abi.HookSessionBeforeTree:
				return fmt.Errorf("%s result: summary is for session_before_tree only", method)
			case r.Compaction != nil && hook != abi.HookSessionBeforeCompact:
				return fmt.Errorf("%s result: compaction is for session_before_compact only", method)
			case r.Cancel && (r.Summary != nil || r.Compaction != nil):
				return fmt.Errorf("%s result: cancel with a summary", method)
			}
			return nil
		})
		if err != nil {
			e.logger.Warn(hook+" hook failed; nothing changes", "error", e.hookError(method, err).Error())
			continue
		}
		switch {
		case r.Cancel:
			return SessionBefore{Cancelled: true, By: e.name, Reason: r.Reason}
		case r.Summary != nil:
			return SessionBefore{By: e.name, Summary: r.Summary}
		case r.Compaction != nil:
			return SessionBefore{By: e.name, Summary: r.Compaction}
		}
	}
	return SessionBefore{}
}

// ContextHook runs the context hooks in load order on the messages of a
// model request (as the session file holds messages): each sees what the
// ones before it left. ok is false when no hook replaced them. A hook that
// fails is logged and changes nothing; check, when not nil, refuses a
// replacement (it breaks the conversation), which is then logged and
// ignored.
func (h *Host) ContextHook(ctx context.Context, msgs []json.RawMessage, check func([]json.RawMessage) error) (out []json.RawMessage, ok bool) {
	out = msgs
	for _, e := range h.Extensions() {
		if !e.hasHook(abi.HookContext) {
			continue
		}
		const method = abi.MethodContext
		req, err := encodeRequest12(method, abi.ContextParams{Messages: nonNilRaw(out)})
		if err != nil {
			e.logger.Warn("context hook not called", "error", err.Error())
			continue
		}
		var r abi.ContextAnswer
		err = e.hookCall(ctx, method, req, func(raw json.RawMessage) error {
			return decodeObject(raw, method, &r)
		})
		if err != nil {
			e.logger.Warn("context hook failed; the request is unchanged", "error", e.hookError(method, err).Error())
			continue
		}
		if r.Messages == nil {
			continue
		}
		if check != nil {
			if err := check(r.Messages); err != nil {
				e.logger.Warn("context hook answer ignored: it breaks the conversation", "error", err.Error())
				continue
			}
		}
		out, ok = r.Messages, true
	}
	return out, ok
}

// UserBash is what the user_bash hooks made of a person's !COMMAND.
type UserBash struct {
	// Command is the command as the hooks left it.
	Command string
	// Blocked: an extension (By) refused it; Reason says why.
	Blocked    bool
	By, Reason string
	// Result, when not nil, is an extension's (By) own result: nothing
	// runs.
	Result *abi.UserBashResult
}

// UserBashHook runs the user_bash hooks in load order on a command a
// person typed, chained like tool_call: each sees the command as the ones
// before it left it; the first block or result ends the chain. A hook that
// faults or answers an error blocks the command (nothing runs), with the
// error as the reason.
func (h *Host) UserBashHook(ctx context.Context, command, cwd string) UserBash {
	out := UserBash{Command: command}
	for _, e := range h.Extensions() {
		if !e.hasHook(abi.HookUserBash) {
			continue
		}
		const method = abi.MethodUserBash
		req, err := encodeRequest12(method, abi.UserBashParams{Command: out.Command, Cwd: cwd})
		if err != nil {
			return UserBash{Command: out.Command, Blocked: true, By: e.name, Reason: err.Error()}
		}
		var r abi.UserBashAnswer
		err = e.hookCall(ctx, method, req, func(raw json.RawMessage) error {
			if err := decodeObject(raw, method, &r); err != nil {
				return err
			}
			n := 0
			for _, set := range []bool{r.Command != nil, r.Block, r.Result != nil} {
				if set {
					n++
				}
			}
			if n > 1 {
				return fmt.Errorf("%s result: give one of command, block, result", method)
			}
			if r.Command != nil && strings.TrimSpace(*r.Command) == "" {
				return fmt.Errorf("%s result: command is empty", method)
			}
			return nil
		})
		if err != nil {
			err = e.hookError(method, err)
			e.logger.Warn("user_bash hook failed; the command does not run", "error", err.Error())
			return UserBash{Command: out.Command, Blocked: true, By: e.name, Reason: err.Error()}
		}
		switch {
		case r.Block:
			reason := r.Reason
			if reason == "" {
				reason = "blocked by extension " + e.name
			}
			return UserBash{Command: out.Command, Blocked: true, By: e.name, Reason: reason}
		case r.Result != nil:
			return UserBash{Command: out.Command, By: e.name, Result: r.Result}
		case r.Command != nil:
			out.Command = *r.Command
		}
	}
	return out
}

// SessionEvent sends one of ABI 1.2's session events (an abi.Session*Event
// with its Type set) to the extensions that listed its type in init's
// events, in load order; the extension whose host call ctx is, busy, is
// skipped. Failures are logged.
func (h *Host) SessionEvent(ctx context.Context, typ string, ev any) {
	if !abi.IsSessionEvent12(typ) {
		h.logger.Warn("extension event: not a session event", "type", typ)
		return
	}
	req, err := encodeRequest12(abi.MethodEvent, ev)
	if err != nil {
		h.logger.Warn("extension event: "+err.Error(), "type", typ)
		return
	}
	for _, e := range h.Extensions() {
		if !e.hookEvent || !e.events[typ] || inChain(ctx, e.name) {
			continue
		}
		if err := e.call(ctx, abi.MethodEvent, req, e.hookTO, nil, nil); err != nil {
			e.logger.Warn("event failed", "type", typ, "error", e.hookError("event", err).Error())
		}
	}
}

// encodeRequest12 encodes a request of this file's methods.
func encodeRequest12(method string, params any) ([]byte, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot marshal params: %w", method, err)
	}
	return encodeRequest(method, json.RawMessage(b))
}

// The wire's shapes of this file, for the runtime (which does not import
// internal/abi).
type (
	SessionInfo                = abi.SessionInfoResult
	ContextUsage               = abi.ContextUsageResult
	SendMessageParams          = abi.SendMessageParams
	AgentState                 = abi.AgentStateResult
	HookSummary                = abi.HookSummary
	UserBashResult             = abi.UserBashResult
	SessionBeforeSwitchParams  = abi.SessionBeforeSwitchParams
	SessionBeforeForkParams    = abi.SessionBeforeForkParams
	SessionBeforeTreeParams    = abi.SessionBeforeTreeParams
	SessionBeforeCompactParams = abi.SessionBeforeCompactParams
	SessionSwitchEvent         = abi.SessionSwitchEvent
	SessionForkEvent           = abi.SessionForkEvent
	SessionCompactEvent        = abi.SessionCompactEvent
	SessionTreeEvent           = abi.SessionTreeEvent
)

// Hook names, event types, delivery modes and session_start reasons of
// ABI 1.2's conversation side.
const (
	HookContext              = abi.HookContext
	HookUserBash             = abi.HookUserBash
	HookSessionBeforeSwitch  = abi.HookSessionBeforeSwitch
	HookSessionBeforeFork    = abi.HookSessionBeforeFork
	HookSessionBeforeCompact = abi.HookSessionBeforeCompact
	HookSessionBeforeTree    = abi.HookSessionBeforeTree

	EventSessionSwitch  = abi.EventSessionSwitch
	EventSessionFork    = abi.EventSessionFork
	EventSessionCompact = abi.EventSessionCompact
	EventSessionTree    = abi.EventSessionTree

	DeliverSteer    = abi.DeliverSteer
	DeliverFollowUp = abi.DeliverFollowUp
	DeliverNextTurn = abi.DeliverNextTurn

	StartStartup = abi.StartStartup
	StartNew     = abi.StartNew
	StartResume  = abi.StartResume
	StartFork    = abi.StartFork
	StartReload  = abi.StartReload
)
