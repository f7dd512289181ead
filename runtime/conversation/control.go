package conversation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/session"
)

// This file holds what changes the conversation's session between runs
// (new, switch, fork, clone, name) and a person's RPC bash command. A
// session change drops the agent: the next prompt builds one on the new
// session, and what was queued moves to it. These methods fail with
// agent.ErrBusy while a run or a compaction goes on, and must not be
// called concurrently with Close. A front end may run them off its UI
// goroutine (the session_start hooks they run may ask the person) while
// that goroutine reads the session's state (Session reads an atomic
// pointer).

// ErrNotUserMessage is returned (wrapped) by Fork for an entry that
// is not a user message on the current branch.
var ErrNotUserMessage = errors.New("not a user message on the current branch")

// replaceSession makes s the conversation's session, closes the old one,
// drops the agent (the next use builds one on s) and emits session_start.
func (c *Conversation) replaceSession(s *session.Session, resumed bool) {
	old := c.sess.Swap(s)
	c.resumed.Store(resumed)
	if old != nil && old != s {
		c.closeSession(old)
	}
	if resumed {
		c.restoreModel(s, false, false)
	}
	c.dropAgent()
	c.sessionStarted()
}

// createOptions are the options of a new session next to the current one:
// in the same folder, or in memory when the runtime keeps none on disk.
func (c *Conversation) createOptions(parent string) session.CreateOptions {
	o := c.sessionOptions()
	return session.CreateOptions{Cwd: c.rt.Cwd(), Dir: SessionDir(c.rt.PIHome(), c.rt.Cwd(), o), InMemory: o.Disabled, ParentSession: parent}
}

// NewSession starts a new, empty session (RPC new_session, the TUI's
// /new) in the same folder as the current one (in memory with
// --no-session); parentSession, when not empty, is recorded in its header.
//
// # Errors
//
// agent.ErrBusy while the agent runs.
func (c *Conversation) NewSession(parentSession string) error {
	return c.newSession(context.Background(), parentSession)
}

// newSession is NewSession for a caller whose context says which
// extension asked (its session_before_switch hook is skipped).
func (c *Conversation) newSession(ctx context.Context, parentSession string) error {
	if err := c.idle("new session"); err != nil {
		return err
	}
	if _, err := c.sessionBefore(ctx, "new session", app.HookSessionBeforeSwitch, app.SessionBeforeSwitchParams{Reason: "new"}); err != nil {
		return err
	}
	s, err := session.Create(c.createOptions(parentSession))
	if err != nil {
		return fmt.Errorf("new session: %w", err)
	}
	prev := c.sessionFile()
	c.setStartReason("new")
	c.replaceSession(s, false)
	c.sessionEvent(ctx, app.EventSessionSwitch, app.SessionSwitchEvent{Type: app.EventSessionSwitch, Reason: "new", PreviousSessionFile: prev})
	return nil
}

// SwitchSession opens the session named by arg (a file path, or an id
// prefix looked up as --session does) and makes it the runtime's (RPC
// switch_session, the TUI's /resume). Tool calls an earlier pi left without
// a result get one saying so, as when resuming with -c.
//
// # Errors
//
// agent.ErrBusy while the agent runs; session.ErrNoMatch,
// session.ErrAmbiguous; the file is not a session; session.ErrLocked when
// another pi has it open.
func (c *Conversation) SwitchSession(arg string) error {
	return c.switchSession(context.Background(), arg)
}

// switchSession is SwitchSession for a caller whose context says which
// extension asked (its session_before_switch hook is skipped).
func (c *Conversation) switchSession(ctx context.Context, arg string) error {
	if err := c.idle("switch session"); err != nil {
		return err
	}
	o := c.sessionOptions()
	path, err := session.Resolve(arg, SessionDir(c.rt.PIHome(), c.rt.Cwd(), o), session.DefaultDir(c.rt.PIHome()))
	if err != nil {
		return fmt.Errorf("switch session: %w", err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	cur := c.Session()
	if !cur.InMemory() && samePath(cur.Path(), path) {
		return nil // already there
	}
	if _, err := c.sessionBefore(ctx, "switch session", app.HookSessionBeforeSwitch, app.SessionBeforeSwitchParams{Reason: "resume", TargetSessionFile: path}); err != nil {
		return err
	}
	s, err := session.Open(path, session.OpenOptions{Cwd: c.rt.Cwd(), Warn: c.rt.Warn})
	if err != nil {
		return fmt.Errorf("switch session: %w", err)
	}
	if n, err := s.RepairInterrupted(); err != nil {
		s.Close()
		return fmt.Errorf("switch session %s: %w", path, err)
	} else if n > 0 {
		c.rt.Warn(fmt.Sprintf("session %s: the last run ended while %d tool call(s) ran; each got an error result saying so", path, n))
	}
	prev := c.sessionFile()
	c.setStartReason("resume")
	c.replaceSession(s, true)
	c.sessionEvent(ctx, app.EventSessionSwitch, app.SessionSwitchEvent{Type: app.EventSessionSwitch, Reason: "resume", PreviousSessionFile: prev})
	return nil
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// ForkPoint is a user message a session can be forked from.
type ForkPoint struct {
	EntryID string `json:"entryId"`
	Text    string `json:"text"`
}

// ForkPoints lists the user messages of the current branch, oldest first
// (RPC get_fork_messages).
func (c *Conversation) ForkPoints() []ForkPoint {
	out := []ForkPoint{}
	for _, e := range c.Session().Branch() {
		if m := userMessage(e); m != nil {
			out = append(out, ForkPoint{EntryID: e.ID, Text: blocksText(m.Content)})
		}
	}
	return out
}

func userMessage(e *session.Entry) *session.Message {
	if e.Type != session.TypeMessage {
		return nil
	}
	if i, ok := e.Info(); !ok || i.Role != session.RoleUser {
		return nil // known without decoding the message again
	}
	m, err := e.Message()
	if err != nil || m.Role != session.RoleUser {
		return nil
	}
	return m
}

func blocksText(blocks []session.Block) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Fork starts a new session holding the current branch up to just
// before the user message entryID, and returns that message's text (a
// front end puts it back in its editor) (RPC fork, the TUI's /fork). The
// new session's header names the old one as its parent.
//
// # Errors
//
// agent.ErrBusy while the agent runs; ErrNotUserMessage; the new file
// cannot be written.
func (c *Conversation) Fork(entryID string) (string, error) {
	return c.fork(context.Background(), entryID)
}

// fork is Fork for a caller whose context says which extension asked (its
// session_before_fork hook is skipped).
func (c *Conversation) fork(ctx context.Context, entryID string) (string, error) {
	if err := c.idle("fork session"); err != nil {
		return "", err
	}
	cur := c.Session()
	var target *session.Entry
	for _, e := range cur.Branch() {
		if e.ID == entryID && userMessage(e) != nil {
			target = e
		}
	}
	if target == nil {
		return "", fmt.Errorf("fork session: entry %q: %w", entryID, ErrNotUserMessage)
	}
	if _, err := c.sessionBefore(ctx, "fork session", app.HookSessionBeforeFork, app.SessionBeforeForkParams{EntryID: entryID}); err != nil {
		return "", err
	}
	s, err := cur.ForkAt(target.ParentID, c.createOptions(""))
	if err != nil {
		return "", err
	}
	c.forked(ctx, s)
	return blocksText(userMessage(target).Content), nil
}

// Clone starts a new session holding the whole current branch
// (RPC clone); its header names the old one as its parent.
//
// # Errors
//
// agent.ErrBusy while the agent runs; the new file cannot be written.
func (c *Conversation) Clone() error {
	if err := c.idle("clone session"); err != nil {
		return err
	}
	cur := c.Session()
	if _, err := c.sessionBefore(context.Background(), "clone session", app.HookSessionBeforeFork, app.SessionBeforeForkParams{EntryID: cur.Leaf()}); err != nil {
		return err
	}
	s, err := cur.ForkAt(cur.Leaf(), c.createOptions(""))
	if err != nil {
		return err
	}
	c.forked(context.Background(), s)
	return nil
}

// forked makes s, forked from the current session, the conversation's
// and tells the extensions (session_start with reason fork, then
// session_fork).
func (c *Conversation) forked(ctx context.Context, s *session.Session) {
	prev := c.sessionFile()
	c.setStartReason("fork")
	c.replaceSession(s, false)
	c.sessionEvent(ctx, app.EventSessionFork, app.SessionForkEvent{Type: app.EventSessionFork, PreviousSessionFile: prev})
}

// SetSessionName names the session (a session_info entry; RPC
// set_session_name, the TUI's /name): one line, trimmed, at most
// MaxSessionNameLen bytes, the API key redacted.
//
// # Errors
//
// An empty name, a longer one or one with a line break; a failed write.
func (c *Conversation) SetSessionName(name string) error {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return errors.New("session name: empty; give a name: /name NAME")
	case len(name) > MaxSessionNameLen:
		return fmt.Errorf("session name: %d bytes, more than the %d allowed", len(name), MaxSessionNameLen)
	case strings.ContainsAny(name, "\r\n"):
		return errors.New("session name: must be one line")
	}
	if _, err := c.Session().AppendSessionInfo(c.rt.Redactor().String(name)); err != nil {
		return fmt.Errorf("session name: %w", err)
	}
	return nil
}

// RunBash runs a command a person typed (RPC bash) as the runtime's
// RunBash does — no tool hooks or permission rules: the person is the one
// asking — and adds it to the conversation (a bashExecution message in the
// session, which the model sees with the next prompt as the reference
// sends it: "Ran `CMD`" and the output). A command that ends while a run
// goes on is added when the run ends. Cancel ctx to stop it.
//
// # Errors
//
// As app.Runtime.RunBash; a failed write of the session.
func (c *Conversation) RunBash(ctx context.Context, command string, update func(output string)) (app.BashResult, error) {
	command, own, err := c.userBash(ctx, command)
	if err != nil {
		return app.BashResult{}, err
	}
	var res app.BashResult
	if own != nil {
		res = *own
	} else if res, err = c.rt.RunBash(ctx, command, update); err != nil {
		return res, err
	}
	c.mu.Lock()
	if c.running > 0 {
		c.pendingBash = append(c.pendingBash, pendingBash{command: command, res: res})
		c.mu.Unlock()
		return res, nil
	}
	c.mu.Unlock()
	return res, c.recordBash(command, res)
}

// recordBash adds a command a person ran and its result to the session
// and to the agent's conversation; nothing runs.
func (c *Conversation) recordBash(command string, res app.BashResult) error {
	red := c.rt.Redactor()
	m := session.Message{
		Role: session.RoleBashExecution, Command: red.String(command), Output: red.String(res.Output),
		ExitCode: res.ExitCode, Cancelled: res.Cancelled, Truncated: res.Truncated, FullOutputPath: res.FullOutputPath,
	}
	return c.appendMessage("record bash", m)
}

// appendMessage adds m to the session and to the agent's conversation
// (nothing runs).
func (c *Conversation) appendMessage(op string, m session.Message) error {
	if _, err := c.Session().AppendMessage(m); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	ag := c.current()
	if ag == nil {
		return nil // the agent, when built, starts from the session
	}
	if err := ag.SetMessages(append(ag.Messages(), session.ToLLM([]session.Message{m})...)); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}
