package abi

import "encoding/json"

// This file declares the conversation side of ABI 1.2: the session.* and
// agent.* host methods, the hooks context, user_bash and
// session_before_{switch,fork,compact,tree}, and the session_switch,
// session_fork, session_compact and session_tree events.

// Host methods of ABI 1.2 on the session (host_call).
const (
	HostMethodSessionInfo         = "session.info"
	HostMethodSessionBranch       = "session.branch"
	HostMethodSessionTree         = "session.tree"
	HostMethodSessionSetName      = "session.setName"
	HostMethodSessionSetLabel     = "session.setLabel"
	HostMethodSessionContextUsage = "session.contextUsage"
	HostMethodSessionCompact      = "session.compact"
	// Command or shortcut only.
	HostMethodSessionNew      = "session.new"
	HostMethodSessionSwitch   = "session.switch"
	HostMethodSessionFork     = "session.fork"
	HostMethodSessionNavigate = "session.navigate"
)

// Host methods of ABI 1.2 on the agent (host_call).
const (
	HostMethodAgentSendUserMessage = "agent.sendUserMessage"
	HostMethodAgentSendMessage     = "agent.sendMessage"
	HostMethodAgentAbort           = "agent.abort"
	HostMethodAgentState           = "agent.state"
)

// Hooks of ABI 1.2 on the conversation, called in the guest through
// pi_call.
const (
	MethodContext              = "hook.context"
	MethodUserBash             = "hook.user_bash"
	MethodSessionBeforeSwitch  = "hook.session_before_switch"
	MethodSessionBeforeFork    = "hook.session_before_fork"
	MethodSessionBeforeCompact = "hook.session_before_compact"
	MethodSessionBeforeTree    = "hook.session_before_tree"
)

// Hook names of ABI 1.2 a guest may list in InitResult.Hooks (when init's
// abiMinor >= 2).
const (
	HookContext              = "context"
	HookUserBash             = "user_bash"
	HookSessionBeforeSwitch  = "session_before_switch"
	HookSessionBeforeFork    = "session_before_fork"
	HookSessionBeforeCompact = "session_before_compact"
	HookSessionBeforeTree    = "session_before_tree"
)

// Event types of ABI 1.2 on the session, sent to guests that list them in
// InitResult.Events.
const (
	EventSessionSwitch  = "session_switch"
	EventSessionFork    = "session_fork"
	EventSessionCompact = "session_compact"
	EventSessionTree    = "session_tree"
)

// The reasons session_start gives (ABI 1.2).
const (
	StartStartup = "startup"
	StartNew     = "new"
	StartResume  = "resume"
	StartFork    = "fork"
	StartReload  = "reload"
)

// IsSessionEvent12 reports whether t is one of the session events ABI 1.2
// adds.
func IsSessionEvent12(t string) bool {
	switch t {
	case EventSessionSwitch, EventSessionFork, EventSessionCompact, EventSessionTree:
		return true
	}
	return false
}

// IsConversationHook12 reports whether h is one of the conversation hooks
// ABI 1.2 adds.
func IsConversationHook12(h string) bool {
	switch h {
	case HookContext, HookUserBash, HookSessionBeforeSwitch, HookSessionBeforeFork, HookSessionBeforeCompact, HookSessionBeforeTree:
		return true
	}
	return false
}

// SessionInfoResult is session.info's result.
type SessionInfoResult struct {
	SessionID string `json:"sessionId"`
	// SessionFile is null for a session kept in memory.
	SessionFile *string `json:"sessionFile"`
	// Name is null until the session is named.
	Name *string `json:"name"`
	// LeafID is null for an empty session.
	LeafID *string `json:"leafId"`
}

// SessionBranchParams are session.branch's params.
type SessionBranchParams struct {
	// Limit keeps the last Limit entries (omitted or 0: all).
	Limit int `json:"limit,omitempty"`
}

// SessionEntriesRawResult is the result of session.branch and
// session.tree: entries as the session file holds them (redacted).
type SessionEntriesRawResult struct {
	Entries []json.RawMessage `json:"entries"`
}

// SessionSetNameParams are session.setName's params.
type SessionSetNameParams struct {
	Name string `json:"name"`
}

// SessionSetLabelParams are session.setLabel's params.
type SessionSetLabelParams struct {
	EntryID string `json:"entryId"`
	// Label null (or "") clears the label.
	Label *string `json:"label"`
}

// ContextUsageResult is session.contextUsage's result.
type ContextUsageResult struct {
	// Tokens is null when nothing is known yet (no model answer since the
	// last compaction and nothing to estimate).
	Tokens        *int     `json:"tokens"`
	ContextWindow int      `json:"contextWindow"`
	Percent       *float64 `json:"percent"`
}

// SessionCompactParams are session.compact's params.
type SessionCompactParams struct {
	CustomInstructions string `json:"customInstructions,omitempty"`
}

// SessionSwitchParams are session.switch's params.
type SessionSwitchParams struct {
	SessionPath string `json:"sessionPath"`
}

// SessionForkParams are session.fork's params.
type SessionForkParams struct {
	EntryID string `json:"entryId"`
}

// SessionNavigateParams are session.navigate's params.
type SessionNavigateParams struct {
	TargetID  string `json:"targetId"`
	Summarize bool   `json:"summarize,omitempty"`
}

// CancelledResult is the result of session.new, switch, fork and
// navigate: whether a session_before_* hook cancelled it.
type CancelledResult struct {
	Cancelled bool `json:"cancelled"`
}

// Delivery modes of agent.sendUserMessage and agent.sendMessage.
const (
	DeliverSteer    = "steer"
	DeliverFollowUp = "followUp"
	DeliverNextTurn = "nextTurn"
)

// SendUserMessageParams are agent.sendUserMessage's params.
type SendUserMessageParams struct {
	// Content is a string or content blocks.
	Content json.RawMessage `json:"content"`
	// DeliverAs is DeliverSteer (omitted) or DeliverFollowUp, for a run
	// going on.
	DeliverAs string `json:"deliverAs,omitempty"`
}

// SendMessageParams are agent.sendMessage's params.
type SendMessageParams struct {
	CustomType string `json:"customType"`
	// Content is a string or content blocks.
	Content json.RawMessage `json:"content"`
	// Display shows the message in the front end.
	Display bool `json:"display,omitempty"`
	// Details are kept in the entry, never sent to the model.
	Details json.RawMessage `json:"details,omitempty"`
	// TriggerTurn starts a run when idle.
	TriggerTurn bool `json:"triggerTurn,omitempty"`
	// DeliverAs is DeliverSteer (omitted), DeliverFollowUp or
	// DeliverNextTurn, for a run going on.
	DeliverAs string `json:"deliverAs,omitempty"`
}

// AgentStateResult is agent.state's result.
type AgentStateResult struct {
	Idle            bool   `json:"idle"`
	PendingMessages int    `json:"pendingMessages"`
	SystemPrompt    string `json:"systemPrompt"`
}

// ContextParams are hook.context's params.
type ContextParams struct {
	// Messages are what the next model request sends, as the session file
	// holds messages.
	Messages []json.RawMessage `json:"messages"`
}

// ContextAnswer is hook.context's result: {} or {messages}.
type ContextAnswer struct {
	Messages []json.RawMessage `json:"messages,omitempty"`
}

// UserBashParams are hook.user_bash's params.
type UserBashParams struct {
	Command string `json:"command"`
	Cwd     string `json:"cwd"`
}

// UserBashAnswer is hook.user_bash's result: {}, {command}, {block,
// reason} or {result}.
type UserBashAnswer struct {
	Command *string         `json:"command,omitempty"`
	Block   bool            `json:"block,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	Result  *UserBashResult `json:"result,omitempty"`
}

// UserBashResult is a user_bash hook's own result of a command.
type UserBashResult struct {
	Output   string `json:"output"`
	ExitCode int    `json:"exitCode"`
}

// SessionBeforeSwitchParams are hook.session_before_switch's params.
type SessionBeforeSwitchParams struct {
	// Reason is "new" or "resume".
	Reason            string `json:"reason"`
	TargetSessionFile string `json:"targetSessionFile,omitempty"`
}

// SessionBeforeForkParams are hook.session_before_fork's params.
type SessionBeforeForkParams struct {
	EntryID string `json:"entryId"`
}

// SessionBeforeTreeParams are hook.session_before_tree's params.
type SessionBeforeTreeParams struct {
	TargetID  string `json:"targetId"`
	OldLeafID string `json:"oldLeafId"`
	Summarize bool   `json:"summarize"`
}

// SessionBeforeCompactParams are hook.session_before_compact's params.
type SessionBeforeCompactParams struct {
	// Reason is "manual", "threshold" or "overflow".
	Reason             string            `json:"reason"`
	CustomInstructions string            `json:"customInstructions,omitempty"`
	TokensBefore       int               `json:"tokensBefore"`
	FirstKeptEntryID   string            `json:"firstKeptEntryId"`
	Messages           []json.RawMessage `json:"messages"`
	PreviousSummary    string            `json:"previousSummary,omitempty"`
}

// SessionBeforeAnswer is the result of the session_before_* hooks: {},
// {cancel, reason?}, for tree also {summary}, for compact also
// {compaction}.
type SessionBeforeAnswer struct {
	Cancel     bool         `json:"cancel,omitempty"`
	Reason     string       `json:"reason,omitempty"`
	Summary    *HookSummary `json:"summary,omitempty"`
	Compaction *HookSummary `json:"compaction,omitempty"`
}

// HookSummary is a summary a session_before_tree or
// session_before_compact hook gives instead of the model's.
type HookSummary struct {
	Summary string          `json:"summary"`
	Details json.RawMessage `json:"details,omitempty"`
}

// SessionSwitchEvent is the params of a session_switch event.
type SessionSwitchEvent struct {
	Type string `json:"type"`
	// Reason is "new" or "resume".
	Reason              string `json:"reason"`
	PreviousSessionFile string `json:"previousSessionFile"`
}

// SessionForkEvent is the params of a session_fork event.
type SessionForkEvent struct {
	Type                string `json:"type"`
	PreviousSessionFile string `json:"previousSessionFile"`
}

// SessionCompactEvent is the params of a session_compact event.
type SessionCompactEvent struct {
	Type    string `json:"type"`
	EntryID string `json:"entryId"`
	// FromExtension: a session_before_compact hook gave the summary.
	FromExtension bool `json:"fromExtension"`
}

// SessionTreeEvent is the params of a session_tree event.
type SessionTreeEvent struct {
	Type      string `json:"type"`
	NewLeafID string `json:"newLeafId"`
	OldLeafID string `json:"oldLeafId"`
}
