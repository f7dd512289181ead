package sdk

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/pi-go/pi/internal/abi"
)

// This file holds the conversation side of the SDK: the session methods of
// ABI 1.1 (SessionAppend, SessionEntries) and 1.2 (SessionInfo,
// SessionBranch, ..., NewSession, SwitchSession, ForkSession, Navigate),
// the agent methods (SendUserMessage, SendMessage, Abort, GetAgentState),
// and the hooks context, user_bash and session_before_*. The 1.2 hooks
// and events are declared to the host only when it speaks ABI 1.2
// (ABIMinor() >= 2): on an older host they stay unused and a warning is
// logged.

// SessionEntry is a custom entry of the session (SessionEntries).
type SessionEntry struct {
	ID         string
	CustomType string
	Data       json.RawMessage
}

// SessionAppend adds a custom entry (never sent to the model) of
// customType holding data (as JSON) on the current branch, and returns its
// id. Without a session file (--no-session, pi tool call) it lives in
// memory until pi exits.
//
// # Errors
//
// A *HostError ("invalid custom entry: ..."), or data that does not
// marshal.
func SessionAppend(customType string, data any) (id string, err error) {
	b, err := json.Marshal(data)
	if err != nil {
		return "", fmt.Errorf("session.append: %w", err)
	}
	var res abi.SessionAppendResult
	err = HostCall(abi.HostMethodSessionAppend, abi.SessionAppendParams{CustomType: customType, Data: b}, &res)
	return res.ID, err
}

// SessionEntries lists the custom entries on the current branch, root
// first; only those of customType when it is not empty.
//
// # Errors
//
// A *HostError.
func SessionEntries(customType string) ([]SessionEntry, error) {
	var res abi.SessionEntriesResult
	if err := HostCall(abi.HostMethodSessionEntries, abi.SessionEntriesParams{CustomType: customType}, &res); err != nil {
		return nil, err
	}
	out := make([]SessionEntry, 0, len(res.Entries))
	for _, e := range res.Entries {
		out = append(out, SessionEntry{ID: e.ID, CustomType: e.CustomType, Data: e.Data})
	}
	return out, nil
}

// SessionInfo describes the current session.
type SessionInfo struct {
	SessionID string
	// SessionFile is "" for a session in memory; Name "" until named;
	// LeafID "" for an empty session.
	SessionFile, Name, LeafID string
}

// GetSessionInfo returns the current session's id, file, name and leaf.
//
// # Errors
//
// A *HostError ("not available in mode tool", ...).
func GetSessionInfo() (SessionInfo, error) {
	var res abi.SessionInfoResult
	if err := HostCall(abi.HostMethodSessionInfo, struct{}{}, &res); err != nil {
		return SessionInfo{}, err
	}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return SessionInfo{SessionID: res.SessionID, SessionFile: deref(res.SessionFile), Name: deref(res.Name), LeafID: deref(res.LeafID)}, nil
}

// Entry is a session entry as the session file holds it (the reference's
// v3 format); Type says which ("message", "compaction", "custom",
// "custom_message", "label", "session_info", ...), Raw is the whole entry.
type Entry struct {
	Type     string `json:"type"`
	ID       string `json:"id"`
	ParentID string `json:"parentId"`
	Raw      json.RawMessage
}

func entriesFrom(raws []json.RawMessage) ([]Entry, error) {
	out := make([]Entry, 0, len(raws))
	for i, r := range raws {
		var e Entry
		if err := json.Unmarshal(r, &e); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		e.Raw = r
		out = append(out, e)
	}
	return out, nil
}

// SessionBranch returns the current branch's entries, root to leaf; with
// limit > 0 only the last limit.
//
// # Errors
//
// A *HostError.
func SessionBranch(limit int) ([]Entry, error) {
	var res abi.SessionEntriesRawResult
	if err := HostCall(abi.HostMethodSessionBranch, abi.SessionBranchParams{Limit: limit}, &res); err != nil {
		return nil, err
	}
	return entriesFrom(res.Entries)
}

// SessionTree returns every entry of the session, of every branch, in
// file order.
//
// # Errors
//
// A *HostError.
func SessionTree() ([]Entry, error) {
	var res abi.SessionEntriesRawResult
	if err := HostCall(abi.HostMethodSessionTree, struct{}{}, &res); err != nil {
		return nil, err
	}
	return entriesFrom(res.Entries)
}

// SetSessionName names the session (a session_info entry).
//
// # Errors
//
// A *HostError (an empty name, one over the length allowed, two lines).
func SetSessionName(name string) error {
	return HostCall(abi.HostMethodSessionSetName, abi.SessionSetNameParams{Name: name}, nil)
}

// SetLabel labels the entry entryID; label "" clears its label.
//
// # Errors
//
// A *HostError (an unknown entry).
func SetLabel(entryID, label string) error {
	p := abi.SessionSetLabelParams{EntryID: entryID}
	if label != "" {
		p.Label = &label
	}
	return HostCall(abi.HostMethodSessionSetLabel, p, nil)
}

// ContextUsage is how full the model's context is.
type ContextUsage struct {
	// Known is false when nothing is known yet (Tokens and Percent are
	// then 0).
	Known         bool
	Tokens        int
	ContextWindow int
	Percent       float64
}

// GetContextUsage returns the context's tokens, the model's window and the
// percentage used.
//
// # Errors
//
// A *HostError.
func GetContextUsage() (ContextUsage, error) {
	var res abi.ContextUsageResult
	if err := HostCall(abi.HostMethodSessionContextUsage, struct{}{}, &res); err != nil {
		return ContextUsage{}, err
	}
	out := ContextUsage{ContextWindow: res.ContextWindow}
	if res.Tokens != nil {
		out.Known, out.Tokens = true, *res.Tokens
	}
	if res.Percent != nil {
		out.Percent = *res.Percent
	}
	return out, nil
}

// Compact asks for a compaction (reason manual) once the conversation is
// idle; it returns at once. instructions, when not empty, focus the
// summary.
//
// # Errors
//
// A *HostError.
func Compact(instructions string) error {
	return HostCall(abi.HostMethodSessionCompact, abi.SessionCompactParams{CustomInstructions: instructions}, nil)
}

func cancelledCall(method string, params any) (bool, error) {
	var res abi.CancelledResult
	err := HostCall(method, params, &res)
	return res.Cancelled, err
}

// NewSession starts a new session (in a command or shortcut only);
// cancelled says another extension's session_before_switch hook refused.
//
// # Errors
//
// A *HostError ("session.new is only allowed in a command or shortcut").
func NewSession() (cancelled bool, err error) {
	return cancelledCall(abi.HostMethodSessionNew, struct{}{})
}

// SwitchSession opens the session file path (in a command or shortcut
// only).
//
// # Errors
//
// A *HostError.
func SwitchSession(path string) (cancelled bool, err error) {
	return cancelledCall(abi.HostMethodSessionSwitch, abi.SessionSwitchParams{SessionPath: path})
}

// ForkSession starts a new session from the branch up to before the user
// message entryID (in a command or shortcut only).
//
// # Errors
//
// A *HostError.
func ForkSession(entryID string) (cancelled bool, err error) {
	return cancelledCall(abi.HostMethodSessionFork, abi.SessionForkParams{EntryID: entryID})
}

// Navigate moves the session's leaf to targetID (in a command or shortcut
// only); with summarize a branch_summary of the branch left is written
// first.
//
// # Errors
//
// A *HostError.
func Navigate(targetID string, summarize bool) (cancelled bool, err error) {
	return cancelledCall(abi.HostMethodSessionNavigate, abi.SessionNavigateParams{TargetID: targetID, Summarize: summarize})
}

// The delivery modes of SendUserMessage and SendMessage.
const (
	DeliverSteer    = abi.DeliverSteer
	DeliverFollowUp = abi.DeliverFollowUp
	DeliverNextTurn = abi.DeliverNextTurn
)

// messageContent is a message's content: a string, or blocks.
func messageContent(text string, blocks []Block) (json.RawMessage, error) {
	if blocks == nil {
		return json.Marshal(text)
	}
	return json.Marshal(blocksToABI(blocks))
}

// SendUserMessage sends text (and, when given, blocks instead) as a user
// message: while idle it starts a run once the current call returns; in
// a run it is queued as deliverAs says (DeliverSteer, "" too, or
// DeliverFollowUp). Input hooks do not see it.
//
// # Errors
//
// A *HostError.
func SendUserMessage(text string, blocks []Block, deliverAs string) error {
	c, err := messageContent(text, blocks)
	if err != nil {
		return err
	}
	return HostCall(abi.HostMethodAgentSendUserMessage, abi.SendUserMessageParams{Content: c, DeliverAs: deliverAs}, nil)
}

// Message is an extension's message (SendMessage): a custom_message entry
// the model sees as a user message.
type Message struct {
	CustomType string
	// Text is the content, unless Blocks are given.
	Text   string
	Blocks []Block
	// Display shows it in the front end; Details are kept in the entry,
	// never sent to the model.
	Display bool
	Details any
	// TriggerTurn starts a run when idle; DeliverAs says how it joins a
	// run going on (DeliverSteer, DeliverFollowUp, DeliverNextTurn).
	TriggerTurn bool
	DeliverAs   string
}

// SendMessage adds m to the conversation.
//
// # Errors
//
// A *HostError, or Details that do not marshal.
func SendMessage(m Message) error {
	c, err := messageContent(m.Text, m.Blocks)
	if err != nil {
		return err
	}
	p := abi.SendMessageParams{CustomType: m.CustomType, Content: c, Display: m.Display, TriggerTurn: m.TriggerTurn, DeliverAs: m.DeliverAs}
	if m.Details != nil {
		if p.Details, err = json.Marshal(m.Details); err != nil {
			return fmt.Errorf("agent.sendMessage: details: %w", err)
		}
	}
	return HostCall(abi.HostMethodAgentSendMessage, p, nil)
}

// Abort stops the run going on (nothing happens when idle).
//
// # Errors
//
// A *HostError.
func Abort() error { return HostCall(abi.HostMethodAgentAbort, struct{}{}, nil) }

// AgentState is the agent's state.
type AgentState struct {
	Idle            bool
	PendingMessages int
	SystemPrompt    string
}

// GetAgentState returns whether the agent is idle, how many messages wait
// and the system prompt.
//
// # Errors
//
// A *HostError.
func GetAgentState() (AgentState, error) {
	var res abi.AgentStateResult
	if err := HostCall(abi.HostMethodAgentState, struct{}{}, &res); err != nil {
		return AgentState{}, err
	}
	return AgentState{Idle: res.Idle, PendingMessages: res.PendingMessages, SystemPrompt: res.SystemPrompt}, nil
}

// The event types of ABI 1.2's session (for Events).
const (
	EventSessionSwitch  = abi.EventSessionSwitch
	EventSessionFork    = abi.EventSessionFork
	EventSessionCompact = abi.EventSessionCompact
	EventSessionTree    = abi.EventSessionTree
)

// session12 are the 1.2 conversation hooks a guest registered.
type session12 struct {
	context       []func([]json.RawMessage) []json.RawMessage
	userBash      []func(UserBash) UserBashAction
	beforeSwitch  []func(SessionBeforeSwitch) SessionDecision
	beforeFork    []func(SessionBeforeFork) SessionDecision
	beforeCompact []func(SessionBeforeCompact) SessionDecision
	beforeTree    []func(SessionBeforeTree) SessionDecision
}

// OnContext registers a context hook: before each model request it sees
// the messages about to be sent (as the session file holds messages) and
// may return others (nil keeps them). The session keeps its own; an answer
// that breaks the conversation is ignored by the host.
func OnContext(fn func(messages []json.RawMessage) []json.RawMessage) {
	std.s12.context = append(std.s12.context, fn)
}

// UserBash is a command a person typed (!COMMAND, RPC bash).
type UserBash struct{ Command, Cwd string }

// UserBashAction is a user_bash hook's answer; the zero value lets the
// command run.
type UserBashAction struct {
	// Command, when not empty, replaces the command.
	Command string
	// Block refuses it with Reason.
	Block  bool
	Reason string
	// Result, when not nil, is shown and recorded instead: nothing runs.
	Result *UserBashResult
}

// UserBashResult is a user_bash hook's own result of a command.
type UserBashResult struct {
	Output   string
	ExitCode int
}

// OnUserBash registers a user_bash hook.
func OnUserBash(fn func(UserBash) UserBashAction) { std.s12.userBash = append(std.s12.userBash, fn) }

// SessionDecision is a session_before_* hook's answer; the zero value lets
// it happen.
type SessionDecision struct {
	// Cancel stops it, with Reason.
	Cancel bool
	Reason string
	// Summary (session_before_tree: the branch summary; session_before_
	// compact: the compaction) replaces the model's, with Details.
	Summary string
	Details any
}

// SessionBeforeSwitch is what a session_before_switch hook sees: Reason
// "new" or "resume" (TargetSessionFile then names the file).
type SessionBeforeSwitch struct{ Reason, TargetSessionFile string }

// SessionBeforeFork is what a session_before_fork hook sees.
type SessionBeforeFork struct{ EntryID string }

// SessionBeforeTree is what a session_before_tree hook sees.
type SessionBeforeTree struct {
	TargetID, OldLeafID string
	Summarize           bool
}

// SessionBeforeCompact is what a session_before_compact hook sees: the
// reason ("manual", "threshold", "overflow"), the messages the summary
// replaces, where the kept part starts and the previous summary.
type SessionBeforeCompact struct {
	Reason             string
	CustomInstructions string
	TokensBefore       int
	FirstKeptEntryID   string
	Messages           []json.RawMessage
	PreviousSummary    string
}

// OnSessionBeforeSwitch registers a hook run before a new session starts
// or another is resumed; it may cancel.
func OnSessionBeforeSwitch(fn func(SessionBeforeSwitch) SessionDecision) {
	std.s12.beforeSwitch = append(std.s12.beforeSwitch, fn)
}

// OnSessionBeforeFork registers a hook run before a fork; it may cancel.
func OnSessionBeforeFork(fn func(SessionBeforeFork) SessionDecision) {
	std.s12.beforeFork = append(std.s12.beforeFork, fn)
}

// OnSessionBeforeTree registers a hook run before the leaf moves; it may
// cancel or give the branch summary (Summary).
func OnSessionBeforeTree(fn func(SessionBeforeTree) SessionDecision) {
	std.s12.beforeTree = append(std.s12.beforeTree, fn)
}

// OnSessionBeforeCompact registers a hook run before every compaction; it
// may cancel or give the compaction's summary (Summary).
func OnSessionBeforeCompact(fn func(SessionBeforeCompact) SessionDecision) {
	std.s12.beforeCompact = append(std.s12.beforeCompact, fn)
}

// initResult12 adds the 1.2 conversation hooks to init's answer (only for a
// 1.2 host), and drops the 1.2 session events from an older host's.
func (r *registry) initResult12(res *abi.InitResult) {
	s := r.s12
	hooks := []struct {
		name string
		n    int
	}{
		{abi.HookContext, len(s.context)}, {abi.HookUserBash, len(s.userBash)},
		{abi.HookSessionBeforeSwitch, len(s.beforeSwitch)}, {abi.HookSessionBeforeFork, len(s.beforeFork)},
		{abi.HookSessionBeforeCompact, len(s.beforeCompact)}, {abi.HookSessionBeforeTree, len(s.beforeTree)},
	}
	if r.abiMinor < 2 {
		used := slices.ContainsFunc(hooks, func(h struct {
			name string
			n    int
		}) bool {
			return h.n > 0
		}) || slices.ContainsFunc(res.Events, abi.IsSessionEvent12)
		if used {
			Logf(LevelWarn, "extension %s uses ABI 1.2 (conversation hooks or session events), but the host speaks ABI 1.%d: those parts stay unused", r.name, r.abiMinor)
		}
		res.Events = slices.DeleteFunc(res.Events, abi.IsSessionEvent12)
		return
	}
	for _, h := range hooks {
		if h.n > 0 {
			res.Hooks = append(res.Hooks, h.name)
		}
	}
}

func (r *registry) hookContext(p *abi.ContextParams) (any, error) {
	msgs, changed := p.Messages, false
	for _, fn := range r.s12.context {
		if out := fn(msgs); out != nil {
			msgs, changed = out, true
		}
	}
	if !changed {
		return abi.ContextAnswer{}, nil
	}
	return abi.ContextAnswer{Messages: msgs}, nil
}

func (r *registry) hookUserBash(p *abi.UserBashParams) (any, error) {
	in := UserBash{Command: p.Command, Cwd: p.Cwd}
	replaced := false
	for _, fn := range r.s12.userBash {
		a := fn(in)
		switch {
		case a.Block:
			return abi.UserBashAnswer{Block: true, Reason: a.Reason}, nil
		case a.Result != nil:
			return abi.UserBashAnswer{Result: &abi.UserBashResult{Output: a.Result.Output, ExitCode: a.Result.ExitCode}}, nil
		case a.Command != "":
			in.Command, replaced = a.Command, true
		}
	}
	if replaced {
		c := in.Command
		return abi.UserBashAnswer{Command: &c}, nil
	}
	return abi.UserBashAnswer{}, nil
}

// sessionBefore runs the hooks of one session_before_* method: the first
// cancel or summary is the answer. summaryKey says where a summary goes
// ("" when the hook takes none).
func sessionBefore[T any](fns []func(T) SessionDecision, in T, summaryKey string) (any, error) {
	for _, fn := range fns {
		d := fn(in)
		if d.Cancel {
			return abi.SessionBeforeAnswer{Cancel: true, Reason: d.Reason}, nil
		}
		if d.Summary == "" || summaryKey == "" {
			continue
		}
		s := &abi.HookSummary{Summary: d.Summary}
		if d.Details != nil {
			b, err := json.Marshal(d.Details)
			if err != nil {
				return nil, fmt.Errorf("summary details: %w", err)
			}
			s.Details = b
		}
		if summaryKey == "compaction" {
			return abi.SessionBeforeAnswer{Compaction: s}, nil
		}
		return abi.SessionBeforeAnswer{Summary: s}, nil
	}
	return abi.SessionBeforeAnswer{}, nil
}

// paramsFor12 returns a pointer to the params of a 1.2 conversation hook;
// nil for another method.
func paramsFor12(method string) any {
	switch method {
	case abi.MethodContext:
		return new(abi.ContextParams)
	case abi.MethodUserBash:
		return new(abi.UserBashParams)
	case abi.MethodSessionBeforeSwitch:
		return new(abi.SessionBeforeSwitchParams)
	case abi.MethodSessionBeforeFork:
		return new(abi.SessionBeforeForkParams)
	case abi.MethodSessionBeforeCompact:
		return new(abi.SessionBeforeCompactParams)
	case abi.MethodSessionBeforeTree:
		return new(abi.SessionBeforeTreeParams)
	}
	return nil
}

// handle12 answers a 1.2 conversation hook; ok is false for other params.
func (r *registry) handle12(params any) (result any, what string, ok bool, err error) {
	switch p := params.(type) {
	case *abi.ContextParams:
		result, err = r.hookContext(p)
		return result, "context hook", true, err
	case *abi.UserBashParams:
		result, err = r.hookUserBash(p)
		return result, "user_bash hook", true, err
	case *abi.SessionBeforeSwitchParams:
		result, err = sessionBefore(r.s12.beforeSwitch, SessionBeforeSwitch{Reason: p.Reason, TargetSessionFile: p.TargetSessionFile}, "")
		return result, "session_before_switch hook", true, err
	case *abi.SessionBeforeForkParams:
		result, err = sessionBefore(r.s12.beforeFork, SessionBeforeFork{EntryID: p.EntryID}, "")
		return result, "session_before_fork hook", true, err
	case *abi.SessionBeforeTreeParams:
		result, err = sessionBefore(r.s12.beforeTree, SessionBeforeTree{TargetID: p.TargetID, OldLeafID: p.OldLeafID, Summarize: p.Summarize}, "summary")
		return result, "session_before_tree hook", true, err
	case *abi.SessionBeforeCompactParams:
		result, err = sessionBefore(r.s12.beforeCompact, SessionBeforeCompact{
			Reason: p.Reason, CustomInstructions: p.CustomInstructions, TokensBefore: p.TokensBefore,
			FirstKeptEntryID: p.FirstKeptEntryID, Messages: p.Messages, PreviousSummary: p.PreviousSummary,
		}, "compaction")
		return result, "session_before_compact hook", true, err
	}
	return nil, "", false, nil
}
