package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/compaction"
	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/tool"
)

// This file is the conversation side of extension ABI 1.2: the
// session_before_* hooks around new, switch, fork, navigate and every
// compaction (with the session_* events after them), the context hook
// before each model request, the user_bash hook before a person's shell
// command, and what the session.* and agent.* host methods do (extConv).
// The host methods reach the conversation through app.ExtConversation.

// CancelledError is returned (wrapped) by NewSession, SwitchSession,
// Fork, Clone, NavigateTree and Compact when an extension's
// session_before_* hook cancelled them. RPC answers new_session,
// switch_session and fork with cancelled: true, and compact with its
// text.
type CancelledError struct {
	// Op is what was cancelled: "new session", "switch session", "fork
	// session", "navigate tree" or "compaction".
	Op string
	// By is the extension; Reason its reason ("" when it gave none).
	By, Reason string
}

func (e *CancelledError) Error() string {
	s := fmt.Sprintf("%s cancelled by extension %s", e.Op, e.By)
	if e.Op != "compaction" && e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// IsCancelled reports whether err is (or wraps) a CancelledError.
func IsCancelled(err error) bool {
	var ce *CancelledError
	return errors.As(err, &ce)
}

// ext12 is the conversation's ABI 1.2 state.
type ext12 struct {
	mu sync.Mutex
	// cond is signalled when pending, draining or the hold change.
	cond *sync.Cond
	// startReason is session_start's reason for the next session change
	// ("" is startup, or resume for a resumed session).
	startReason string
	// pending are the runs extensions asked for while idle, run in order
	// once the conversation is idle (drain).
	pending []extRun
	// nextTurn are custom messages to add before the next prompt.
	nextTurn []CustomMessage
	// draining: a goroutine runs pending; hold > 0: a command runs, whose
	// messages wait until it returns.
	draining bool
	hold     int
	// run is where the run an extension asked for is (runExtensionRun).
	run extRunState
}

// extRunState is where a run an extension asked for is.
type extRunState int

const (
	extRunNone extRunState = iota
	// extRunActive: before its agent_end (a prompt steers it).
	extRunActive
	// extRunEnding: past its agent_end, still holding the conversation
	// (a prompt waits for it).
	extRunEnding
)

// extRun is a run an extension asked for: a user message to prompt with,
// or (msg nil) a turn on the conversation as it is.
type extRun struct {
	msg *llm.Message
	// compact, when set, is a compaction (session.compact) instead.
	compact      bool
	instructions string
	// reload, when set, is pi.reload instead (run12.go).
	reload bool
}

func (x *ext12) init() {
	x.mu.Lock()
	if x.cond == nil {
		x.cond = sync.NewCond(&x.mu)
	}
	x.mu.Unlock()
}

// setStartReason sets the reason of the next session_start.
func (c *Conversation) setStartReason(r string) {
	c.x12.mu.Lock()
	c.x12.startReason = r
	c.x12.mu.Unlock()
}

// takeStartReason is session_start's reason: the one set, else startup
// (resume for a session that existed).
func (c *Conversation) takeStartReason() string {
	c.x12.mu.Lock()
	r := c.x12.startReason
	c.x12.startReason = ""
	c.x12.mu.Unlock()
	if r == "" {
		r = "startup"
	}
	return r
}

// EmitSessionStart sends session_start again with reason (ABI 1.2:
// "reload" after the extensions were loaded again).
func (c *Conversation) EmitSessionStart(reason string) {
	c.setStartReason(reason)
	c.sessionStarted()
}

// sessionBefore runs the session_before_* hook; a cancel is a
// CancelledError for op.
func (c *Conversation) sessionBefore(ctx context.Context, op, hook string, params any) (app.SessionBefore, error) {
	if c.opts.child != nil {
		return app.SessionBefore{}, nil
	}
	d := c.rt.SessionBeforeHook(ctx, hook, params)
	if d.Cancelled {
		return d, &CancelledError{Op: op, By: d.By, Reason: d.Reason}
	}
	return d, nil
}

// sessionEvent sends an ABI 1.2 session event to the extensions.
func (c *Conversation) sessionEvent(ctx context.Context, typ string, ev any) {
	if c.opts.child == nil {
		c.rt.SessionEvent(ctx, typ, ev)
	}
}

// hookedCompactor runs the session_before_compact hooks before pi's
// compactor: a cancel fails the compaction, a compaction answer becomes the
// entry without asking the model. session_compact follows a compaction.
type hookedCompactor struct {
	c     *Conversation
	inner *compaction.Compactor
	sess  *session.Session
	keep  int
}

func (h *hookedCompactor) Compact(ctx context.Context, reason agent.CompactReason, instructions string) ([]llm.Message, *agent.CompactionResult, error) {
	c := h.c
	if c.opts.child != nil || (!c.rt.HasExtensionHook(app.HookSessionBeforeCompact)) {
		msgs, res, err := h.inner.Compact(ctx, reason, instructions)
		if err == nil {
			c.sessionEvent(ctx, app.EventSessionCompact, app.SessionCompactEvent{Type: app.EventSessionCompact, EntryID: h.sess.Leaf()})
		}
		return msgs, res, err
	}
	prep, err := compaction.Prepare(h.sess.Branch(), h.keep)
	if err != nil {
		return nil, nil, err
	}
	msgs := make([]json.RawMessage, 0, len(prep.ToSummarize))
	for i := range prep.ToSummarize {
		b, err := json.Marshal(&prep.ToSummarize[i])
		if err == nil {
			msgs = append(msgs, b)
		}
	}
	d, err := c.sessionBefore(ctx, "compaction", app.HookSessionBeforeCompact, app.SessionBeforeCompactParams{
		Reason: string(reason), CustomInstructions: instructions, TokensBefore: prep.TokensBefore,
		FirstKeptEntryID: prep.FirstKeptEntryID, Messages: msgs, PreviousSummary: prep.PreviousSummary,
	})
	if err != nil {
		return nil, nil, err
	}
	if d.Summary == nil {
		out, res, err := h.inner.Compact(ctx, reason, instructions)
		if err == nil {
			c.sessionEvent(ctx, app.EventSessionCompact, app.SessionCompactEvent{Type: app.EventSessionCompact, EntryID: h.sess.Leaf()})
		}
		return out, res, err
	}
	res := session.CompactionResult{Summary: c.rt.Redactor().String(d.Summary.Summary), FirstKeptEntryID: prep.FirstKeptEntryID, TokensBefore: prep.TokensBefore}
	id, err := h.sess.AppendHookCompaction(res, c.rt.Redactor().Bytes(d.Summary.Details))
	if err != nil {
		return nil, nil, err
	}
	c.sessionEvent(ctx, app.EventSessionCompact, app.SessionCompactEvent{Type: app.EventSessionCompact, EntryID: id, FromExtension: true})
	return session.ToLLM(h.sess.Context()), &res, nil
}

// contextHook runs the extensions' context hooks on a model request's
// messages (agent.Config.Context): as the session file holds messages;
// an answer that cannot be read back, or that breaks the conversation (a
// tool result without its call), is logged and ignored.
func (c *Conversation) contextHook(ctx context.Context, msgs []llm.Message) []llm.Message {
	raws := make([]json.RawMessage, 0, len(msgs))
	for _, m := range msgs {
		sm := session.FromLLM(m, session.AssistantMeta{})
		b, err := json.Marshal(&sm)
		if err != nil {
			c.rt.Logger().Warn("context hook not called: a message cannot be encoded", "error", err.Error())
			return msgs
		}
		raws = append(raws, b)
	}
	var decoded []llm.Message
	check := func(out []json.RawMessage) error {
		got, err := decodeContext(out)
		if err != nil {
			return err
		}
		decoded = got
		return nil
	}
	if _, ok := c.rt.ContextHook(ctx, raws, check); !ok {
		return msgs
	}
	return decoded
}

// decodeContext reads a context hook's messages and checks that they make
// a conversation the model accepts: every tool result follows the
// assistant message that called it.
func decodeContext(raws []json.RawMessage) ([]llm.Message, error) {
	sms := make([]session.Message, 0, len(raws))
	for i, r := range raws {
		m, err := session.DecodeMessage(r)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		if m.Role == "" {
			return nil, fmt.Errorf("messages[%d]: no role", i)
		}
		sms = append(sms, m)
	}
	out := session.ToLLM(sms)
	calls := map[string]bool{}
	for i, m := range out {
		switch m.Role {
		case llm.RoleAssistant:
			for _, tc := range m.ToolCalls {
				calls[tc.ID] = true
			}
		case llm.RoleToolResult:
			if !calls[m.ToolCallID] {
				return nil, fmt.Errorf("message %d: a tool result for call %q without its call", i, m.ToolCallID)
			}
			delete(calls, m.ToolCallID)
		}
	}
	return out, nil
}

// userBash runs the user_bash hooks on a command a person typed. It
// returns the command to run; blocked (an error holding the reason) or a
// hook's own result (the command then does not run).
func (c *Conversation) userBash(ctx context.Context, command string) (string, *app.BashResult, error) {
	if c.opts.child != nil || !c.rt.HasExtensionHook(app.HookUserBash) {
		return command, nil, nil
	}
	d := c.rt.UserBashHook(ctx, command)
	switch {
	case d.Blocked:
		return command, nil, errors.New(d.Reason)
	case d.Result != nil:
		code := d.Result.ExitCode
		return command, &app.BashResult{Output: c.rt.Redactor().String(d.Result.Output), ExitCode: &code}, nil
	}
	return d.Command, nil, nil
}

// holdExtensionRuns keeps the runs extensions ask for from starting until
// the returned func is called (a command runs: its messages start a run
// once it returned).
func (c *Conversation) holdExtensionRuns() func() {
	c.x12.init()
	c.x12.mu.Lock()
	c.x12.hold++
	c.x12.mu.Unlock()
	return func() {
		c.x12.mu.Lock()
		c.x12.hold--
		c.x12.mu.Unlock()
		c.kickExtensionRuns()
	}
}

// MaxPendingExtensionRuns is how many runs extensions may have waiting
// (agent.sendUserMessage, agent.sendMessage with triggerTurn,
// session.compact while idle); past it they are refused.
const MaxPendingExtensionRuns = 32

// queueExtensionRun adds a run an extension asked for while idle and
// starts it once the conversation is idle.
//
// # Errors
//
// MaxPendingExtensionRuns runs already wait.
func (c *Conversation) queueExtensionRun(r extRun) error {
	c.x12.init()
	c.x12.mu.Lock()
	if len(c.x12.pending) >= MaxPendingExtensionRuns {
		c.x12.mu.Unlock()
		return fmt.Errorf("%d runs asked for by extensions already wait; try again once they ran", MaxPendingExtensionRuns)
	}
	c.x12.pending = append(c.x12.pending, r)
	c.x12.mu.Unlock()
	c.kickExtensionRuns()
	return nil
}

// kickExtensionRuns starts the goroutine that runs the pending runs, if
// there are some and nothing holds them.
func (c *Conversation) kickExtensionRuns() {
	c.x12.init()
	c.x12.mu.Lock()
	defer c.x12.mu.Unlock()
	if c.x12.draining || c.x12.hold > 0 || len(c.x12.pending) == 0 {
		c.x12.cond.Broadcast()
		return
	}
	c.x12.draining = true
	go c.drainExtensionRuns()
}

// drainExtensionRuns runs the pending runs one by one; when a run of
// another caller goes on it stops (that run's end kicks it again).
func (c *Conversation) drainExtensionRuns() {
	defer func() {
		c.x12.mu.Lock()
		c.x12.draining = false
		c.x12.cond.Broadcast()
		c.x12.mu.Unlock()
	}()
	for {
		c.x12.mu.Lock()
		if len(c.x12.pending) == 0 || c.x12.hold > 0 {
			c.x12.mu.Unlock()
			return
		}
		r := c.x12.pending[0]
		c.x12.pending = c.x12.pending[1:]
		c.x12.mu.Unlock()
		err := c.runExtensionRun(r)
		if errors.Is(err, agent.ErrBusy) {
			c.x12.mu.Lock()
			c.x12.pending = append([]extRun{r}, c.x12.pending...)
			c.x12.mu.Unlock()
			return
		}
		if err != nil {
			c.rt.Logger().Warn("a run an extension asked for failed", "error", err.Error())
		}
	}
}

func (c *Conversation) runExtensionRun(r extRun) error {
	ctx := context.Background()
	if r.reload {
		return c.reloadExtensions(ctx)
	}
	if r.compact {
		_, err := c.Compact(ctx, r.instructions)
		if errors.Is(err, compaction.ErrNothingToCompact) || errors.Is(err, compaction.ErrAlreadyCompacted) || IsCancelled(err) {
			c.rt.Logger().Info("session.compact: " + err.Error())
			return nil
		}
		return err
	}
	ag, err := c.agent()
	if err != nil {
		return err
	}
	ctx, end, err := c.begin(ctx, "extension run")
	if err != nil {
		return err
	}
	c.setExtRun(extRunActive)
	defer func() {
		end()
		c.setExtRun(extRunNone)
	}()
	if r.msg == nil {
		_, err = ag.Continue(ctx)
		c.setExtRun(extRunEnding)
		return err
	}
	c.flushNextTurn()
	start := c.beforeTurn(ctx)
	_, err = ag.PromptMessage(ctx, *r.msg)
	c.setExtRun(extRunEnding)
	c.afterTurn(ctx, start, messageText(*r.msg))
	return err
}

func (c *Conversation) setExtRun(st extRunState) {
	c.x12.init()
	c.x12.mu.Lock()
	c.x12.run = st
	c.x12.cond.Broadcast()
	c.x12.mu.Unlock()
}

// extRunBusy says what a prompt that found the conversation busy does
// about a run an extension asked for: steer is true while it runs (before
// its agent_end); when it is past its agent_end, extRunBusy waits until it
// let go of the conversation (or ctx ends) and says retry.
func (c *Conversation) extRunBusy(ctx context.Context) (steer, retry bool) {
	found, looked := extRunNone, false
	c.waitX12(ctx, func() bool {
		if !looked {
			found, looked = c.x12.run, true
		}
		return found == extRunEnding && c.x12.run == extRunEnding
	})
	switch found {
	case extRunActive:
		return true, false
	case extRunEnding:
		return false, ctx.Err() == nil
	}
	return false, false
}

// waitExtensionRun waits, for a built-in command that found the
// conversation busy, until the runs extensions asked for that go on end
// (held by the command's Submit, no new one starts meanwhile): true when
// one went on and ended, so the command can run now; false when none goes
// on (the person's own run or a compaction holds the conversation: the
// command's "abort it first" stands) or ctx ended.
func (c *Conversation) waitExtensionRun(ctx context.Context) bool {
	waited := false
	c.waitX12(ctx, func() bool {
		busy := c.x12.run != extRunNone || c.x12.draining
		waited = waited || busy
		return busy
	})
	return waited && ctx.Err() == nil
}

// waitX12 waits, under c.x12.mu, while busy (called with the lock held)
// says so and ctx has not ended.
func (c *Conversation) waitX12(ctx context.Context, busy func() bool) {
	c.x12.init()
	stop := context.AfterFunc(ctx, func() {
		c.x12.mu.Lock()
		c.x12.cond.Broadcast()
		c.x12.mu.Unlock()
	})
	defer stop()
	c.x12.mu.Lock()
	defer c.x12.mu.Unlock()
	for busy() && ctx.Err() == nil {
		c.x12.cond.Wait()
	}
}

// flushNextTurn adds the custom messages kept for the next prompt.
func (c *Conversation) flushNextTurn() {
	c.x12.mu.Lock()
	msgs := c.x12.nextTurn
	c.x12.nextTurn = nil
	c.x12.mu.Unlock()
	for _, m := range msgs {
		if err := c.appendCustomMessage(m); err != nil {
			c.rt.Logger().Warn("extension message not added", "error", err.Error())
		}
	}
}

// WaitExtensionRuns waits until every run an extension started or queued
// has ended (pi -p and --mode json finish them before exiting), or ctx
// ends.
func (c *Conversation) WaitExtensionRuns(ctx context.Context) error {
	c.waitX12(ctx, func() bool { return len(c.x12.pending) > 0 || c.x12.draining })
	return ctx.Err()
}

func messageText(m llm.Message) string {
	for _, b := range m.Content {
		if b.Type == "text" {
			return b.Text
		}
	}
	return ""
}

// decodeMessageContent reads a content that is a string or content blocks.
func decodeMessageContent(raw json.RawMessage) ([]content.Block, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []content.Block{content.Text(s)}, nil
	}
	var blocks []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("content must be a string or content blocks: %w", err)
	}
	out := make([]content.Block, 0, len(blocks))
	for _, b := range blocks {
		switch b.Type {
		case "text":
			out = append(out, content.Text(b.Text))
		case "image":
			out = append(out, content.Image(b.Data, b.MimeType))
		default:
			return nil, fmt.Errorf("content block type %q must be text or image", b.Type)
		}
	}
	return out, nil
}

// extConv answers the extensions' session.* and agent.* host methods
// (app.ExtConversation).
type extConv struct{ c *Conversation }

var _ app.ExtConversation = extConv{}

func (x extConv) SessionInfo(context.Context) (app.ExtSessionInfo, error) {
	s := x.c.Session()
	out := app.ExtSessionInfo{SessionID: s.ID()}
	if !s.InMemory() {
		p := s.Path()
		out.SessionFile = &p
	}
	if n := s.Name(); n != "" {
		out.Name = &n
	}
	if l := s.Leaf(); l != "" {
		out.LeafID = &l
	}
	return out, nil
}

// entriesJSON is entries as the file holds them, redacted.
func (x extConv) entriesJSON(ents []*session.Entry) ([]json.RawMessage, error) {
	red := x.c.rt.Redactor()
	out := make([]json.RawMessage, 0, len(ents))
	for _, e := range ents {
		b, err := e.JSON()
		if err != nil {
			return nil, fmt.Errorf("entry %s: %w", e.ID, err)
		}
		out = append(out, red.Bytes(b))
	}
	return out, nil
}

func (x extConv) SessionBranch(_ context.Context, limit int) ([]json.RawMessage, error) {
	ents := x.c.Session().Branch()
	if limit > 0 && len(ents) > limit {
		ents = ents[len(ents)-limit:]
	}
	return x.entriesJSON(ents)
}

func (x extConv) SessionTree(context.Context) ([]json.RawMessage, error) {
	return x.entriesJSON(x.c.Session().Entries())
}

func (x extConv) SetSessionName(_ context.Context, name string) error {
	return x.c.SetSessionName(name)
}

func (x extConv) SetLabel(_ context.Context, entryID, label string) error {
	return x.c.SetLabel(entryID, label)
}

func (x extConv) ContextUsage(context.Context) (app.ExtContextUsage, error) {
	out := app.ExtContextUsage{ContextWindow: x.c.ContextWindow()}
	if n := x.c.ContextTokens(); n > 0 {
		out.Tokens = &n
		if out.ContextWindow > 0 {
			p := float64(n) * 100 / float64(out.ContextWindow)
			out.Percent = &p
		}
	}
	return out, nil
}

func (x extConv) CompactLater(_ context.Context, _, instructions string) error {
	return x.c.queueExtensionRun(extRun{compact: true, instructions: instructions})
}

// cancelled turns a CancelledError into the {cancelled: true} answer.
func cancelled(err error) (bool, error) {
	if IsCancelled(err) {
		return true, nil
	}
	return false, err
}

func (x extConv) NewSession(ctx context.Context, _ string) (bool, error) {
	return cancelled(x.c.newSession(ctx, ""))
}

func (x extConv) SwitchSession(ctx context.Context, _, path string) (bool, error) {
	return cancelled(x.c.switchSession(ctx, path))
}

func (x extConv) ForkSession(ctx context.Context, _, entryID string) (bool, error) {
	_, err := x.c.fork(ctx, entryID)
	return cancelled(err)
}

func (x extConv) Navigate(ctx context.Context, _, targetID string, summarize bool) (bool, error) {
	_, err := x.c.NavigateTree(ctx, targetID, NavigateOptions{Summarize: summarize})
	return cancelled(err)
}

func (x extConv) SendUserMessage(_ context.Context, ext string, raw json.RawMessage, deliverAs string) error {
	blocks, err := decodeMessageContent(raw)
	if err != nil {
		return err
	}
	m := llm.Message{Role: llm.RoleUser, Content: blocks, Details: &ExtensionPrompt{Extension: ext}}
	if ag := x.c.current(); ag != nil && x.c.Busy() {
		if deliverAs == app.DeliverFollowUp {
			ag.FollowUp(m)
		} else {
			ag.Steer(m)
		}
		return nil
	}
	return x.c.queueExtensionRun(extRun{msg: &m})
}

func (x extConv) SendMessage(_ context.Context, _ string, p app.ExtSendMessageParams) error {
	blocks, err := decodeMessageContent(p.Content)
	if err != nil {
		return err
	}
	red := x.c.rt.Redactor()
	sm := CustomMessage{CustomType: p.CustomType, Content: red.Bytes(p.Content), Display: p.Display, Details: red.Bytes(p.Details)}
	if ag := x.c.current(); ag != nil && x.c.Busy() {
		// Delivered as a user message the model sees; the session sink
		// records it as a custom_message entry where it is delivered
		// (Details marks it).
		m := llm.Message{Role: llm.RoleUser, Content: blocks, Details: &sm}
		switch p.DeliverAs {
		case app.DeliverNextTurn:
			x.c.x12.mu.Lock()
			x.c.x12.nextTurn = append(x.c.x12.nextTurn, sm)
			x.c.x12.mu.Unlock()
		case app.DeliverFollowUp:
			ag.FollowUp(m)
		default:
			ag.Steer(m)
		}
		return nil
	}
	if err := x.c.appendCustomMessage(sm); err != nil {
		return err
	}
	if p.TriggerTurn {
		return x.c.queueExtensionRun(extRun{})
	}
	return nil
}

func (x extConv) Abort(context.Context) error {
	x.c.Abort()
	return nil
}

func (x extConv) AgentState(context.Context) (app.ExtAgentState, error) {
	out := app.ExtAgentState{Idle: !x.c.Busy()}
	steer, follow := x.c.Queued()
	x.c.x12.mu.Lock()
	out.PendingMessages = len(steer) + len(follow) + len(x.c.x12.pending) + len(x.c.x12.nextTurn)
	x.c.x12.mu.Unlock()
	if ts, err := x.c.toolSet(); err == nil {
		out.SystemPrompt = ts.SystemPrompt
	}
	return out, nil
}

// ownShellResult is RunShellCommand's answer when a user_bash hook gave
// the result itself: shown and recorded as the command's bashExecution;
// nothing ran.
func (c *Conversation) ownShellResult(command string, res app.BashResult) (*BashRun, error) {
	run := &BashRun{Command: command, Result: tool.Result{Content: []tool.ContentBlock{tool.Text(res.Output)}}, ExitCode: res.ExitCode}
	c.mu.Lock()
	if c.running > 0 {
		c.pendingBash = append(c.pendingBash, pendingBash{command: command, res: res})
		c.mu.Unlock()
		return run, nil
	}
	c.mu.Unlock()
	return run, c.recordBash(command, res)
}

// CustomMessage is an extension's message (ABI 1.2 agent.sendMessage),
// redacted: Content (a string or content blocks) and Details as the
// extension sent them.
type CustomMessage struct {
	CustomType string          `json:"customType"`
	Content    json.RawMessage `json:"content"`
	Details    json.RawMessage `json:"details,omitempty"`
	// Display: the front ends show it (EventCustomMessage).
	Display bool `json:"display"`
}

// EventCustomMessage is sent to Subscribe's listeners (not to the
// extensions) when a custom message with display: true joins the
// conversation: at once while idle, where a run delivers it (steer,
// followUp), with the next prompt (nextTurn). ev.Message is the user
// message the model sees; its Details is the *CustomMessage. Front ends
// show "[customType]" then the content, or the extension's lines
// (app.Runtime.RenderCustomMessage).
const EventCustomMessage agent.EventType = "pi.custom_message"

// customShown is the EventCustomMessage of m (blocks: its content).
func customShown(m *CustomMessage, blocks []content.Block) agent.Event {
	return agent.Event{Type: EventCustomMessage, Message: &llm.Message{Role: llm.RoleUser, Content: blocks, Details: m}}
}

// DeliveredCustom is the extension's message a user message of a run is
// (one sendMessage queued with steer or followUp), nil for any other.
func DeliveredCustom(m *llm.Message) *CustomMessage {
	if m == nil || m.Role != llm.RoleUser {
		return nil
	}
	cm, _ := m.Details.(*CustomMessage)
	return cm
}

// ExtensionPrompt marks (as its Details) a user message an extension sent
// with agent.sendUserMessage, so that the front ends can show it: the
// person did not type it. It is not written to the session (a user
// message's Details never is) nor to the RPC and JSON streams
// (WireEvent).
type ExtensionPrompt struct {
	// Extension sent it.
	Extension string
}

// FromExtension says which extension sent m with agent.sendUserMessage,
// "" when none did.
func FromExtension(m *llm.Message) string {
	if m == nil || m.Role != llm.RoleUser {
		return ""
	}
	if p, ok := m.Details.(*ExtensionPrompt); ok {
		return firstNonEmpty(p.Extension, "extension")
	}
	return ""
}

// customWire is a custom message as the reference's front-end streams
// carry it (its CustomMessage, role "custom").
type customWire struct {
	Role       string          `json:"role"`
	CustomType string          `json:"customType"`
	Content    json.RawMessage `json:"content"`
	Display    bool            `json:"display"`
	Details    json.RawMessage `json:"details,omitempty"`
	Timestamp  int64           `json:"timestamp"`
}

// WireEvent is ev as the RPC and JSON streams write it: a message_start
// or message_end of an extension's message (agent.sendMessage, delivered
// while idle or by a run) carries the reference's custom message
// `{role: "custom", customType, content, display, details?, timestamp}`;
// one of agent.sendUserMessage a plain user message; every other event is
// ev itself.
func WireEvent(ev agent.Event) any {
	if ev.Type != agent.EventMessageStart && ev.Type != agent.EventMessageEnd {
		return ev
	}
	if FromExtension(ev.Message) != "" {
		m := *ev.Message
		m.Details = nil // the reference's user message
		ev.Message = &m
		return ev
	}
	cm := DeliveredCustom(ev.Message)
	if cm == nil {
		return ev
	}
	body := cm.Content
	if len(body) == 0 {
		body, _ = json.Marshal(ev.Message.Content)
	}
	msg, err := json.Marshal(customWire{Role: "custom", CustomType: cm.CustomType, Content: body, Display: cm.Display, Details: cm.Details, Timestamp: time.Now().UnixMilli()})
	if err != nil {
		return ev
	}
	b, err := json.Marshal(ev)
	var out map[string]json.RawMessage
	if err != nil || json.Unmarshal(b, &out) != nil {
		return ev
	}
	out["message"] = msg
	return out
}

// appendCustomMessage adds m as a custom_message entry to the session and
// to the agent's conversation (as the user message the model sees).
func (c *Conversation) appendCustomMessage(m CustomMessage) error {
	s := c.Session()
	id, err := s.AppendCustomMessage(m.CustomType, m.Content, m.Display, m.Details)
	if err != nil {
		return fmt.Errorf("extension message: %w", err)
	}
	msg, ok := s.Entry(id).ContextMessage()
	if ok {
		if blocks := session.ToLLM([]session.Message{msg}); len(blocks) == 1 {
			// As the reference does for a message added while idle:
			// message_start and message_end (the front ends' streams;
			// the session has it already), then the display.
			lm := &llm.Message{Role: llm.RoleUser, Content: blocks[0].Content, Details: &m}
			c.emit(agent.Event{Type: agent.EventMessageStart, Message: lm})
			c.emit(agent.Event{Type: agent.EventMessageEnd, Message: lm})
			if m.Display {
				c.emit(customShown(&m, blocks[0].Content))
			}
		}
	}
	ag := c.current()
	if ag == nil || !ok {
		return nil // the agent, when built, starts from the session
	}
	if err := ag.SetMessages(append(ag.Messages(), session.ToLLM([]session.Message{msg})...)); err != nil {
		return fmt.Errorf("extension message: %w", err)
	}
	return nil
}
