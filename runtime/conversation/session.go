package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/session"
)

// SessionOptions say which session (package runtime/session: the
// reference agent's session files) a Runtime keeps its conversation in.
// At most one of Continue, Path and Fork is meant to be set; Fork wins over
// Path, Path over Continue.
type SessionOptions struct {
	// Disabled keeps the conversation in memory only (--no-session).
	Disabled bool
	// Dir is the folder of this project's session files (--session-dir);
	// "" means $PI_CODING_AGENT_SESSION_DIR, else
	// PIHome/sessions/--CWD-- (see session.DirFor).
	Dir string
	// Continue resumes the most recently modified session in Dir (-c);
	// without one a new session starts.
	Continue bool
	// Path resumes the session file at Path, or the session whose id
	// starts with Path (--session); a file path that does not exist yet
	// starts a new session there.
	Path string
	// Fork copies the session named like Path into a new session whose
	// header records it as parentSession (--fork).
	Fork string
	// NoCheckpoints records no checkpoints of the project's files before
	// and after each turn (--no-checkpoints): /undo and the others then
	// fail (see CheckpointOptions).
	NoCheckpoints bool
}

// SessionDir is the folder of the session files for cwd and o: o.Dir, else
// $PI_CODING_AGENT_SESSION_DIR, else piHome/sessions/--CWD--.
func SessionDir(piHome, cwd string, o SessionOptions) string {
	if o.Dir != "" {
		return o.Dir
	}
	if d := os.Getenv(session.EnvDir); d != "" {
		return d
	}
	return session.DirFor(session.DefaultDir(piHome), cwd)
}

// ListSessions lists the sessions of cwd's folder (see SessionDir), the most
// recently active first.
//
// # Errors
//
// The folder exists but cannot be read.
func ListSessions(piHome, cwd string, o SessionOptions) ([]session.Info, error) {
	if piHome == "" {
		piHome = config.DefaultPIHome()
	}
	abs, err := config.WorkingDir(cwd)
	if err != nil {
		return nil, err
	}
	return session.List(SessionDir(piHome, abs, o))
}

// openSession opens or creates the conversation's session as
// Options.Session says; without it the session is in memory only.
func (c *Conversation) openSession() error {
	o := c.sessionOptions()
	warn, cwd, home := c.rt.Warn, c.rt.Cwd(), c.rt.PIHome()
	dir := SessionDir(home, cwd, o)
	root := session.DefaultDir(home)
	resumed := false
	var (
		s   *session.Session
		err error
	)
	switch {
	case o.Disabled:
		s, err = session.Create(session.CreateOptions{Cwd: cwd, InMemory: true})
	case o.Fork != "":
		var p string
		if p, err = session.Resolve(o.Fork, dir, root); err == nil {
			s, err = session.Fork(p, session.CreateOptions{Cwd: cwd, Dir: dir})
		}
	case o.Path != "":
		var p string
		if p, err = session.Resolve(o.Path, dir, root); err != nil {
			break
		}
		if _, statErr := os.Stat(p); errors.Is(statErr, os.ErrNotExist) {
			s, err = session.Create(session.CreateOptions{Cwd: cwd, Path: p})
		} else {
			s, err = session.Open(p, session.OpenOptions{Cwd: cwd, Warn: warn})
			resumed = err == nil
		}
	case o.Continue:
		if p := session.MostRecent(dir); p != "" {
			s, err = session.Open(p, session.OpenOptions{Cwd: cwd, Warn: warn})
			resumed = err == nil
		} else {
			s, err = session.Create(session.CreateOptions{Cwd: cwd, Dir: dir})
		}
	default:
		co := session.CreateOptions{Cwd: cwd, Dir: dir}
		if c.opts.child != nil {
			co.ParentSession = c.opts.child.parentFile
		}
		s, err = session.Create(co)
	}
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	c.sess.Store(s)
	c.resumed.Store(resumed)
	if resumed {
		mo := c.model
		c.restoreModel(s, mo.Provider != "" || mo.Name != "", mo.Thinking != "")
	}
	if n, err := s.RepairInterrupted(); err != nil {
		c.closeSession(s)
		return fmt.Errorf("session %s: %w", s.Path(), err)
	} else if n > 0 {
		warn(fmt.Sprintf("session %s: the last run ended while %d tool call(s) ran; each got an error result saying so", s.Path(), n))
	}
	return nil
}

// sessionOptions are Options.Session, or an in-memory session.
func (c *Conversation) sessionOptions() SessionOptions {
	if c.opts.Session == nil {
		return SessionOptions{Disabled: true}
	}
	return *c.opts.Session
}

// fileBacked says the session is kept in a file (not --no-session):
// extensions may then write custom entries to it.
func (c *Conversation) fileBacked() bool { return !c.sessionOptions().Disabled }

// closeSession closes s, logging a failure.
func (c *Conversation) closeSession(s *session.Session) {
	if err := s.Close(); err != nil {
		c.rt.Logger().Warn("session not closed cleanly", "file", s.Path(), "error", err.Error())
	}
}

// Session is the conversation's session (in memory only unless
// Options.Session asked for a file). It changes with NewSession,
// SwitchSession, Fork and Clone.
func (c *Conversation) Session() *session.Session { return c.sess.Load() }

// Resumed reports whether the session existed before it was opened (-c,
// --session with an existing file, SwitchSession).
func (c *Conversation) Resumed() bool { return c.resumed.Load() }

// Compact compacts the session now (/compact, RPC compact), with
// instructions for the summary when not empty. It emits compaction_start
// and compaction_end, and the conversation goes on from the summary.
// Abort cancels it.
//
// # Errors
//
// agent.ErrBusy while a run goes on; the model cannot be resolved;
// compaction.ErrNothingToCompact, compaction.ErrAlreadyCompacted; the
// model's error.
func (c *Conversation) Compact(ctx context.Context, instructions string) (*agent.CompactionResult, error) {
	ag, err := c.agent()
	if err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	ctx, end, err := c.begin(ctx, "compact")
	if err != nil {
		return nil, err
	}
	defer end()
	return ag.Compact(ctx, instructions)
}

// modelNames are the provider and model written in the session's
// assistant messages.
type modelNames struct{ provider, model, api string }

// sessionSink persists every message the loop ends (message_end) in the
// session, with the key redacted.
type sessionSink struct {
	c    *Conversation
	once sync.Once
	// mu guards names, the model of the agent built last, and users, the
	// entries of the run's user messages, for dropPrompts.
	mu    sync.Mutex
	names modelNames
	users []string
}

func (ss *sessionSink) setNames(n modelNames) {
	ss.mu.Lock()
	ss.names = n
	ss.mu.Unlock()
}

func (ss *sessionSink) onEvent(ev agent.Event) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ev.Type == agent.EventAgentStart {
		ss.users = nil
	}
	if ev.Type != agent.EventMessageEnd || ev.Message == nil {
		return
	}
	meta := session.AssistantMeta{API: firstNonEmpty(ss.names.api, "openai-completions"), Provider: ss.names.provider, Model: ss.names.model, StopReason: ev.StopReason, ErrorMessage: ev.Error}
	if ev.Usage != nil {
		meta.Usage = *ev.Usage
	}
	s := ss.c.Session()
	if cm := DeliveredCustom(ev.Message); cm != nil {
		// An extension's message a run delivered (sendMessage with steer
		// or followUp): a custom_message entry, as the reference writes
		// it, already redacted.
		id, err := s.AppendCustomMessage(cm.CustomType, cm.Content, cm.Display, cm.Details)
		if err != nil {
			ss.once.Do(func() {
				ss.c.rt.Logger().Warn("the session file could not be written; the conversation goes on but is not saved", "file", s.Path(), "error", err.Error())
			})
			return
		}
		ss.users = append(ss.users, id)
		return
	}
	red := ss.c.rt.Redactor()
	m := session.FromLLM(*ev.Message, meta)
	// Only with a key to hide is the message written out to look for it.
	if red.Active() {
		if b, err := json.Marshal(&m); err == nil && red.ContainsBytes(b) {
			var back session.Message
			if json.Unmarshal(red.Bytes(b), &back) == nil {
				back.Timestamp = m.Timestamp
				m = back
			}
		}
	}
	id, err := s.AppendMessage(m)
	if err != nil {
		ss.once.Do(func() {
			ss.c.rt.Logger().Warn("the session file could not be written; the conversation goes on but is not saved", "file", s.Path(), "error", err.Error())
		})
		return
	}
	if m.Role == session.RoleUser {
		ss.users = append(ss.users, id)
	}
}

// DroppedPromptType is the customType of the custom entry that marks where
// the session went back to after a failed prompt (see dropPrompts).
const DroppedPromptType = "pi.dropped-prompt"

// dropPrompts moves the session back to before the last n user messages
// of the run, which the agent dropped because the model never answered
// them (agent.Config.OnDropPrompts): they and the failed answers stay in
// the file, on a branch of their own, and a custom entry of type
// DroppedPromptType (which no model sees) is appended where the branch goes
// on, so that a resumed session, whose leaf is its last entry, goes on from
// there too; the reference agent reads it the same way.
func (ss *sessionSink) dropPrompts(n int) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if n <= 0 || n > len(ss.users) {
		return
	}
	s := ss.c.Session()
	id := ss.users[len(ss.users)-n]
	ss.users = ss.users[:len(ss.users)-n]
	e := s.Entry(id)
	if e == nil {
		return
	}
	data, _ := json.Marshal(map[string]any{"entryId": id, "reason": "the model failed before answering; the prompt is not part of the conversation"})
	err := s.SetLeaf(e.ParentID)
	if err == nil {
		_, err = s.AppendCustom(DroppedPromptType, data)
	}
	if err != nil {
		ss.c.rt.Logger().Warn("session: the failed prompt stays in the context", "error", err.Error())
	}
}

// sessionFile is the session's path for events ("" in memory).
func (c *Conversation) sessionFile() string {
	s := c.Session()
	if s.InMemory() {
		return ""
	}
	return filepath.Clean(s.Path())
}

// ResolveSession finds the session file arg names (a path, or an id
// prefix looked up in cwd's folder, then every project's), as --session
// does (pi sessions show, export, delete).
//
// # Errors
//
// session.ErrNoMatch, session.ErrAmbiguous; cwd cannot be resolved.
func ResolveSession(piHome, cwd string, o SessionOptions, arg string) (string, error) {
	if piHome == "" {
		piHome = config.DefaultPIHome()
	}
	abs, err := config.WorkingDir(cwd)
	if err != nil {
		return "", err
	}
	p, err := session.Resolve(arg, SessionDir(piHome, abs, o), session.DefaultDir(piHome))
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// DeleteSession removes the session file at path and what pi keeps
// beside it for that session (its checkpoints); a session another pi has
// open is refused (session.ErrLocked).
//
// # Errors
//
// The file is not a session; it is in use; it cannot be removed.
func DeleteSession(path string) error {
	s, err := session.Open(path, session.OpenOptions{})
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	defer s.Close()
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	if err := os.RemoveAll(checkpointDir(path)); err != nil {
		return fmt.Errorf("delete session %s: its checkpoints: %w", path, err)
	}
	return nil
}

// checkpointDir is the folder of a session file's checkpoints: beside
// it, named after it.
func checkpointDir(sessionFile string) string {
	return strings.TrimSuffix(sessionFile, ".jsonl") + ".checkpoints"
}
