package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/tools/builtin"
)

// This file holds what interactive front ends (the TUI, `pi --mode rpc`)
// do to a running Runtime between runs: change the session, run a person's
// shell command, read statistics and the model. After a method here that
// changes the session, the agent NewAgent built before belongs to the old
// one: build a new agent (NewAgent) before the next prompt. These methods
// fail with agent.ErrBusy while that agent runs, and must not be called
// concurrently with Close. A front end may run them off its UI goroutine
// (the session hooks they run may ask the person) while that goroutine
// reads the session's state: Session, SessionName, ModelName,
// ContextTokens and History take the runtime's lock for the session they
// read.

// ErrNotUserMessage is returned (wrapped) by ForkSession for an entry that
// is not a user message on the current branch.
var ErrNotUserMessage = errors.New("not a user message on the current branch")

// sessionOptions are the session options the runtime was opened with.
func (r *Runtime) sessionOptions() SessionOptions {
	if r.opts.Session == nil {
		return SessionOptions{Disabled: true}
	}
	return *r.opts.Session
}

// idle fails with agent.ErrBusy while the agent NewAgent built last runs.
func (r *Runtime) idle(op string) error {
	r.mu.Lock()
	ag := r.agent
	r.mu.Unlock()
	if ag != nil && ag.Running() {
		return fmt.Errorf("%s: %w; abort it first", op, agent.ErrBusy)
	}
	return nil
}

// replaceSession makes s the runtime's session and closes the old one.
func (r *Runtime) replaceSession(s *session.Session, resumed bool) {
	r.mu.Lock()
	old := r.session
	r.session, r.resumed = s, resumed
	r.agent, r.compactor = nil, nil
	r.closers = append(r.closers, func() {
		if err := s.Close(); err != nil {
			r.logger.Warn("session not closed cleanly", "file", s.Path(), "error", err.Error())
		}
	})
	r.mu.Unlock()
	if old != nil && old != s {
		if err := old.Close(); err != nil {
			r.logger.Warn("session not closed cleanly", "file", old.Path(), "error", err.Error())
		}
	}
}

// createOptions are the options of a new session next to the current one:
// in the same folder, or in memory when the runtime keeps none on disk.
func (r *Runtime) createOptions(parent string) session.CreateOptions {
	o := r.sessionOptions()
	return session.CreateOptions{Cwd: r.cwd, Dir: SessionDir(r.piHome, r.cwd, o), InMemory: o.Disabled, ParentSession: parent}
}

// NewSession starts a new, empty session (RPC new_session, the TUI's
// /new) in the same folder as the current one (in memory with
// --no-session); parentSession, when not empty, is recorded in its header.
//
// # Errors
//
// agent.ErrBusy while the agent runs.
func (r *Runtime) NewSession(parentSession string) error {
	if err := r.idle("new session"); err != nil {
		return err
	}
	s, err := session.Create(r.createOptions(parentSession))
	if err != nil {
		return fmt.Errorf("new session: %w", err)
	}
	r.replaceSession(s, false)
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
func (r *Runtime) SwitchSession(arg string) error {
	if err := r.idle("switch session"); err != nil {
		return err
	}
	o := r.sessionOptions()
	path, err := session.Resolve(arg, SessionDir(r.piHome, r.cwd, o), session.DefaultDir(r.piHome))
	if err != nil {
		return fmt.Errorf("switch session: %w", err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	cur := r.Session()
	if !cur.InMemory() && samePath(cur.Path(), path) {
		return nil // already there
	}
	s, err := session.Open(path, session.OpenOptions{Cwd: r.cwd, Warn: r.warn})
	if err != nil {
		return fmt.Errorf("switch session: %w", err)
	}
	if n, err := s.RepairInterrupted(); err != nil {
		s.Close()
		return fmt.Errorf("switch session %s: %w", path, err)
	} else if n > 0 {
		r.warn(fmt.Sprintf("session %s: the last run ended while %d tool call(s) ran; each got an error result saying so", path, n))
	}
	r.replaceSession(s, true)
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
func (r *Runtime) ForkPoints() []ForkPoint {
	out := []ForkPoint{}
	for _, e := range r.Session().Branch() {
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

// ForkSession starts a new session holding the current branch up to just
// before the user message entryID, and returns that message's text (a
// front end puts it back in its editor) (RPC fork, the TUI's /fork). The
// new session's header names the old one as its parent.
//
// # Errors
//
// agent.ErrBusy while the agent runs; ErrNotUserMessage; the new file
// cannot be written.
func (r *Runtime) ForkSession(entryID string) (string, error) {
	if err := r.idle("fork session"); err != nil {
		return "", err
	}
	cur := r.Session()
	var target *session.Entry
	for _, e := range cur.Branch() {
		if e.ID == entryID && userMessage(e) != nil {
			target = e
		}
	}
	if target == nil {
		return "", fmt.Errorf("fork session: entry %q: %w", entryID, ErrNotUserMessage)
	}
	s, err := cur.ForkAt(target.ParentID, r.createOptions(""))
	if err != nil {
		return "", err
	}
	r.replaceSession(s, false)
	return blocksText(userMessage(target).Content), nil
}

// CloneSession starts a new session holding the whole current branch
// (RPC clone); its header names the old one as its parent.
//
// # Errors
//
// agent.ErrBusy while the agent runs; the new file cannot be written.
func (r *Runtime) CloneSession() error {
	if err := r.idle("clone session"); err != nil {
		return err
	}
	cur := r.Session()
	s, err := cur.ForkAt(cur.Leaf(), r.createOptions(""))
	if err != nil {
		return err
	}
	r.replaceSession(s, false)
	return nil
}

// SetSessionName names the session (a session_info entry; RPC
// set_session_name, the TUI's /name): one line, trimmed, at most
// MaxSessionNameLen bytes, the API key redacted.
//
// # Errors
//
// An empty name, a longer one or one with a line break; a failed write.
func (r *Runtime) SetSessionName(name string) error {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return errors.New("session name: empty; give a name: /name NAME")
	case len(name) > MaxSessionNameLen:
		return fmt.Errorf("session name: %d bytes, more than the %d allowed", len(name), MaxSessionNameLen)
	case strings.ContainsAny(name, "\r\n"):
		return errors.New("session name: must be one line")
	}
	if _, err := r.Session().AppendSessionInfo(r.redactor.String(name)); err != nil {
		return fmt.Errorf("session name: %w", err)
	}
	return nil
}

// BashResult is what RunBash reports (the reference agent's BashResult).
type BashResult = builtin.CommandResult

// RunBash runs a command a person typed (RPC bash, the TUI's !cmd) in the
// working directory the way the bash tool runs the model's: the same shell,
// command prefix, bash_spawn hooks, hidden variables and output limits; its
// processes belong to the runtime. It runs no tool hooks or permission
// rules: the person is the one asking. It has no timeout: cancel ctx to
// stop it. update, when not nil, receives the output so far (the API key
// is not redacted there: pass it through Redactor). RecordBash adds the
// result to the conversation.
//
// # Errors
//
// As builtin.RunCommand: a spawn hook's error, no shell, a shell that
// cannot start.
func (r *Runtime) RunBash(ctx context.Context, command string, update func(output string)) (BashResult, error) {
	res, err := builtin.RunCommand(ctx, r.bashOpts, r.cwd, command, update)
	res.Output = r.redactor.String(res.Output)
	return res, err
}

// RecordBash adds a command a person ran and its result to the session (a
// bashExecution message) and to the conversation of the agent NewAgent
// built last, so the model sees it with the next prompt, as the reference
// sends it ("Ran `CMD`" and the output).
//
// # Errors
//
// agent.ErrBusy while the agent runs (record it after the run); a failed
// write.
func (r *Runtime) RecordBash(command string, res BashResult) error {
	r.mu.Lock()
	ag := r.agent
	s := r.session
	r.mu.Unlock()
	if ag != nil && ag.Running() {
		return fmt.Errorf("record bash: %w", agent.ErrBusy)
	}
	m := session.Message{
		Role: session.RoleBashExecution, Command: r.redactor.String(command), Output: r.redactor.String(res.Output),
		ExitCode: res.ExitCode, Cancelled: res.Cancelled, Truncated: res.Truncated, FullOutputPath: res.FullOutputPath,
	}
	if _, err := s.AppendMessage(m); err != nil {
		return fmt.Errorf("record bash: %w", err)
	}
	if ag == nil {
		return nil
	}
	return ag.SetMessages(append(ag.Messages(), session.ToLLM([]session.Message{m})...))
}
