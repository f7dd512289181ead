package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/llm"
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
	abs, err := workingDir(cwd)
	if err != nil {
		return nil, err
	}
	return session.List(SessionDir(piHome, abs, o))
}

// openSession opens or creates the runtime's session as Options.Session
// says; without Options.Session the session is in memory only.
func (r *Runtime) openSession() error {
	o := SessionOptions{Disabled: true}
	if r.opts.Session != nil {
		o = *r.opts.Session
	}
	warn := r.warn
	dir := SessionDir(r.piHome, r.cwd, o)
	root := session.DefaultDir(r.piHome)
	var (
		s   *session.Session
		err error
	)
	switch {
	case o.Disabled:
		s, err = session.Create(session.CreateOptions{Cwd: r.cwd, InMemory: true})
	case o.Fork != "":
		var p string
		if p, err = session.Resolve(o.Fork, dir, root); err == nil {
			s, err = session.Fork(p, session.CreateOptions{Cwd: r.cwd, Dir: dir})
		}
	case o.Path != "":
		var p string
		if p, err = session.Resolve(o.Path, dir, root); err != nil {
			break
		}
		if _, statErr := os.Stat(p); errors.Is(statErr, os.ErrNotExist) {
			s, err = session.Create(session.CreateOptions{Cwd: r.cwd, Path: p})
		} else {
			s, err = session.Open(p, session.OpenOptions{Cwd: r.cwd, Warn: warn})
			r.resumed = err == nil
		}
	case o.Continue:
		if p := session.MostRecent(dir); p != "" {
			s, err = session.Open(p, session.OpenOptions{Cwd: r.cwd, Warn: warn})
			r.resumed = err == nil
		} else {
			s, err = session.Create(session.CreateOptions{Cwd: r.cwd, Dir: dir})
		}
	default:
		s, err = session.Create(session.CreateOptions{Cwd: r.cwd, Dir: dir})
	}
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	r.session = s
	r.closers = append(r.closers, func() {
		if err := s.Close(); err != nil {
			r.logger.Warn("session not closed cleanly", "file", s.Path(), "error", err.Error())
		}
	})
	if n, err := s.RepairInterrupted(); err != nil {
		return fmt.Errorf("session %s: %w", s.Path(), err)
	} else if n > 0 {
		warn(fmt.Sprintf("session %s: the last run ended while %d tool call(s) ran; each got an error result saying so", s.Path(), n))
	}
	return nil
}

// Session is the runtime's session (in memory only unless
// Options.Session asked for a file). It changes with NewSession,
// SwitchSession, ForkSession and CloneSession.
func (r *Runtime) Session() *session.Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.session
}

// SessionResumed reports whether the session existed before it was opened
// (-c, --session with an existing file, SwitchSession).
func (r *Runtime) SessionResumed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resumed
}

// SessionAppend appends a custom entry (state of an extension, named by
// customType) on the current branch of the session; it is never sent to
// the model. It is the runtime side of the host method session.append.
//
// # Errors
//
// session.ErrBadCustom for a bad customType or data (see
// session.AppendCustom); a failed write.
func (r *Runtime) SessionAppend(customType string, data json.RawMessage) (string, error) {
	return r.Session().AppendCustom(customType, r.redactor.Bytes(data))
}

// SessionEntries lists the custom entries on the current branch, root
// first, only those of customType when it is not empty. It is the runtime
// side of the host method session.entries.
func (r *Runtime) SessionEntries(customType string) []session.CustomEntry {
	return r.Session().CustomEntries(customType)
}

// Compact compacts the session now (the /compact command), with
// instructions for the summary when not empty: through the agent NewAgent
// built last (which emits compaction_start and compaction_end and goes on
// with the compacted conversation), else directly.
//
// # Errors
//
// session.ErrNothingToCompact, agent.ErrBusy during a run, and the model's
// error.
func (r *Runtime) Compact(ctx context.Context, instructions string) (*agent.CompactionResult, error) {
	r.mu.Lock()
	ag, c := r.agent, r.compactor
	r.mu.Unlock()
	if ag != nil {
		return ag.Compact(ctx, instructions)
	}
	if c == nil {
		p, err := r.Provider()
		if err != nil {
			return nil, err
		}
		cs, err := r.cfg.CompactionSettings()
		if err != nil {
			return nil, err
		}
		c = &compactor{s: r.Session(), provider: p, keepRecent: cs.KeepRecentTokens}
	}
	_, res, err := c.Compact(ctx, agent.CompactManual, instructions)
	return res, err
}

// compactor compacts the runtime's session for the agent.
type compactor struct {
	s          *session.Session
	provider   llm.Provider
	keepRecent int
}

func (c *compactor) Compact(ctx context.Context, _ agent.CompactReason, instructions string) ([]llm.Message, *agent.CompactionResult, error) {
	prep, err := session.Prepare(c.s.Branch(), c.keepRecent)
	if err != nil {
		return nil, nil, err
	}
	res, err := session.Summarize(ctx, c.provider, prep, instructions)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.s.AppendCompaction(*res); err != nil {
		return nil, nil, err
	}
	out := &agent.CompactionResult{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID, TokensBefore: res.TokensBefore}
	if res.Details != nil {
		out.Details = res.Details
	}
	return session.ToLLM(c.s.Context()), out, nil
}

// modelNames are the provider and model written in the session's
// assistant messages.
type modelNames struct{ provider, model string }

// providerName names an OpenAI-compatible endpoint for the session files:
// "openai" for OpenAI's own API, else the endpoint's host name.
func providerName(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil || u.Hostname() == "" {
		return "openai-compatible"
	}
	if u.Hostname() == "api.openai.com" {
		return "openai"
	}
	return u.Hostname()
}

// sessionSink persists every message the loop ends (message_end) in the
// session, with the key redacted, and passes the event on.
type sessionSink struct {
	r     *Runtime
	names modelNames
	once  sync.Once
	// users are the entries of the run's user messages, for dropPrompts.
	users []string
}

func (ss *sessionSink) onEvent(ev agent.Event) {
	if ev.Type == agent.EventAgentStart {
		ss.users = nil
	}
	if ev.Type != agent.EventMessageEnd || ev.Message == nil {
		return
	}
	meta := session.AssistantMeta{API: "openai-completions", Provider: ss.names.provider, Model: ss.names.model, StopReason: ev.StopReason, ErrorMessage: ev.Error}
	if ev.Usage != nil {
		meta.Usage = *ev.Usage
	}
	m := session.FromLLM(*ev.Message, meta)
	if b, err := json.Marshal(&m); err == nil && ss.r.redactor.Contains(string(b)) {
		var back session.Message
		if json.Unmarshal(ss.r.redactor.Bytes(b), &back) == nil {
			back.Timestamp = m.Timestamp
			m = back
		}
	}
	s := ss.r.Session()
	id, err := s.AppendMessage(m)
	if err != nil {
		ss.once.Do(func() {
			ss.r.logger.Warn("the session file could not be written; the conversation goes on but is not saved", "file", s.Path(), "error", err.Error())
		})
		return
	}
	if m.Role == session.RoleUser {
		ss.users = append(ss.users, id)
	}
}

// DroppedPromptType is the customType of the custom entry that marks where
// the session went back to after a failed prompt (see NewAgent).
const DroppedPromptType = "pi.dropped-prompt"

// dropPrompts moves the session back to before the last n user messages
// of the run, which the agent dropped because the model never answered
// them (agent.Config.OnDropPrompts): they and the failed answers stay in
// the file, on a branch of their own, and a custom entry of type
// DroppedPromptType (which no model sees) is appended where the branch goes
// on, so that a resumed session, whose leaf is its last entry, goes on from
// there too; the reference agent reads it the same way.
func (ss *sessionSink) dropPrompts(n int) {
	if n <= 0 || n > len(ss.users) {
		return
	}
	s := ss.r.Session()
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
		ss.r.logger.Warn("session: the failed prompt stays in the context", "error", err.Error())
	}
}

// sessionFile is the session's path for events ("" in memory).
func (r *Runtime) sessionFile() string {
	s := r.Session()
	if s.InMemory() {
		return ""
	}
	return filepath.Clean(s.Path())
}

// extSession is the session as extensions see it: session.append writes
// a custom entry on the current branch (the key redacted), session.entries
// lists them along the branch (ABI 1.1).
type extSession struct{ r *Runtime }

var _ extensions.Session = extSession{}

func (s extSession) AppendCustom(_ context.Context, _, customType string, data json.RawMessage) (string, error) {
	return s.r.SessionAppend(customType, data)
}

func (s extSession) CustomEntries(_ context.Context, _, customType string) ([]extensions.SessionEntry, error) {
	var out []extensions.SessionEntry
	for _, e := range s.r.SessionEntries(customType) {
		out = append(out, extensions.SessionEntry{ID: e.ID, CustomType: e.CustomType, Data: e.Data})
	}
	return out, nil
}

// extensionSession is what extensions get for session.append and
// session.entries: the runtime's session when it is kept in a file, else
// nil (they answer "no session", as with --no-session).
func (r *Runtime) extensionSession() extensions.Session {
	if r.opts.Session == nil || r.opts.Session.Disabled {
		return nil
	}
	return extSession{r}
}
