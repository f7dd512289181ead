package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/tool"
)

// This file holds what interactive front ends (the TUI, RPC) do between
// runs: name, start, resume and fork sessions, change the model, and run a
// person's own shell command into the conversation. None of these may be
// called while the agent runs or a tool call is in progress; after a
// session or model change the front end builds its agent again with
// NewAgent (the agent goes on from the session, as a resumed one does).

// MaxSessionNameLen bounds a session name, in bytes.
const MaxSessionNameLen = 200

// ErrNoSessionFile is returned (wrapped) by ResumeSession and ForkSession
// when the runtime keeps its session in memory only (--no-session).
var ErrNoSessionFile = errors.New("sessions are not saved in this run (--no-session)")

// SessionName is the current session's display name ("" when it has
// none).
func (r *Runtime) SessionName() string { return r.session.Name() }

// SetSessionName names the current session (a session_info entry, as the
// reference writes for /name). The name is one line, trimmed, with the
// API key redacted.
//
// # Errors
//
// An empty name, a name longer than MaxSessionNameLen or with a line
// break, a failed write.
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
	if _, err := r.session.AppendSessionInfo(r.redactor.String(name)); err != nil {
		return fmt.Errorf("session name: %w", err)
	}
	return nil
}

// NewSession starts a new, empty session in the same folder (in memory
// again with --no-session) and closes the current one.
//
// # Errors
//
// The new session cannot be created.
func (r *Runtime) NewSession() error {
	o := r.baseSessionOptions()
	return r.switchSession(o)
}

// ResumeSession resumes the session at path (a file, or an id prefix as
// --session takes) and closes the current one.
//
// # Errors
//
// ErrNoSessionFile with --no-session; no such session; the current
// session itself; a session another pi has open (session.ErrLocked).
func (r *Runtime) ResumeSession(path string) error {
	o := r.baseSessionOptions()
	if o.Disabled {
		return fmt.Errorf("resume session: %w", ErrNoSessionFile)
	}
	p, err := session.Resolve(path, SessionDir(r.piHome, r.cwd, o), session.DefaultDir(r.piHome))
	if err != nil {
		return fmt.Errorf("resume session: %w", err)
	}
	if !r.session.InMemory() && samePath(p, r.session.Path()) {
		return errors.New("resume session: that is the current session")
	}
	o.Path = p
	return r.switchSession(o)
}

// ForkSession copies the current session into a new session whose header
// names it as parentSession, and goes on in the copy.
//
// # Errors
//
// ErrNoSessionFile with --no-session or before anything was written
// (there is nothing to fork yet); the copy cannot be written.
func (r *Runtime) ForkSession() error {
	o := r.baseSessionOptions()
	if o.Disabled || r.session.InMemory() {
		return fmt.Errorf("fork session: %w", ErrNoSessionFile)
	}
	if !r.session.Written() {
		return errors.New("fork session: the session has no messages yet; there is nothing to fork")
	}
	o.Fork = r.session.Path()
	return r.switchSession(o)
}

// baseSessionOptions are the options of Open without the choice of
// session: where sessions live, and whether they are saved.
func (r *Runtime) baseSessionOptions() SessionOptions {
	o := SessionOptions{Disabled: true}
	if r.opts.Session != nil {
		o = SessionOptions{Disabled: r.opts.Session.Disabled, Dir: r.opts.Session.Dir}
	}
	return o
}

// switchSession opens the session o names, then closes the old one; on
// failure the old one stays.
func (r *Runtime) switchSession(o SessionOptions) error {
	old, oldOpts, oldResumed := r.session, r.opts.Session, r.resumed
	r.opts.Session, r.resumed = &o, false
	if err := r.openSession(); err != nil {
		if r.session != old {
			r.session.Close()
		}
		r.session, r.opts.Session, r.resumed = old, oldOpts, oldResumed
		return err
	}
	if err := old.Close(); err != nil {
		r.logger.Warn("session not closed cleanly", "file", old.Path(), "error", err.Error())
	}
	return nil
}

func samePath(a, b string) bool {
	ea, err1 := filepath.EvalSymlinks(a)
	eb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ea == eb
}

// ModelName is the name of the model the next NewAgent talks to ("" when
// none is configured).
func (r *Runtime) ModelName() string {
	s, _ := ResolveModel(r.cfg, r.opts.Model)
	return s.Name
}

// SetModel makes name the model of the next NewAgent (/model), on the same
// endpoint and key.
//
// # Errors
//
// An empty name or one with spaces or control characters.
func (r *Runtime) SetModel(name string) error {
	name = strings.TrimSpace(name)
	if name == "" || strings.ContainsFunc(name, func(c rune) bool { return c <= ' ' || c == 0x7f }) {
		return fmt.Errorf("set model: %q is not a model name", name)
	}
	r.opts.Model.Name = name
	return nil
}

// ContextWindow is the context window in tokens that compaction works
// with ([compaction] context_window); 0 when it is not known.
func (r *Runtime) ContextWindow() int {
	cs, err := r.cfg.CompactionSettings()
	if err != nil {
		return 0
	}
	return cs.ContextWindow
}

// BashRun is a person's own shell command (!cmd) and what came of it.
type BashRun struct {
	Command string
	// Result is the bash tool's result (output with its truncation notice,
	// IsError for a failure, a block, a non-zero exit).
	Result tool.Result
	// ExitCode is the command's exit status when it ran to its end.
	ExitCode *int
	// Cancelled: the command was aborted or timed out.
	Cancelled bool
	// FullOutputPath is the file with the whole output when the output was
	// truncated.
	FullOutputPath string
}

var exitCodeRE = regexp.MustCompile(`Command exited with code (\d+)\s*$`)

// RunBash runs command with the bash tool through the whole call pipeline
// (tool_call hooks, permissions, approval, tool_result hooks), as the
// model's call would run, and adds it to the conversation the way the
// reference does: a bashExecution message in the session, which the model
// sees as a user message with the command and its output. update receives
// the output as it streams. The agent NewAgent built last gets the message
// too.
//
// # Errors
//
// No bash tool is registered; the session cannot be written; the agent is
// running (agent.ErrBusy).
func (r *Runtime) RunBash(ctx context.Context, command string, update tool.UpdateFunc) (*BashRun, error) {
	input, _ := json.Marshal(map[string]string{"command": command})
	id := "bang_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	res, err := r.CallTool(ctx, "bash", id, input, update)
	if err != nil {
		return nil, err
	}
	run := &BashRun{Command: command, Result: res}
	text := res.Text()
	if m := exitCodeRE.FindStringSubmatch(text); m != nil {
		code, _ := strconv.Atoi(m[1])
		run.ExitCode = &code
	} else if !res.IsError {
		zero := 0
		run.ExitCode = &zero
	}
	run.Cancelled = ctx.Err() != nil || strings.HasSuffix(text, "Command aborted") || strings.Contains(text, "Command timed out after")
	var d struct {
		FullOutputPath string `json:"fullOutputPath"`
	}
	if b, err := json.Marshal(res.Details); err == nil {
		json.Unmarshal(b, &d)
	}
	run.FullOutputPath = d.FullOutputPath
	m := session.Message{
		Role: session.RoleBashExecution, Timestamp: time.Now().UnixMilli(),
		Command: r.redactor.String(command), Output: text, ExitCode: run.ExitCode,
		Cancelled: run.Cancelled, Truncated: d.FullOutputPath != "", FullOutputPath: d.FullOutputPath,
	}
	if _, err := r.session.AppendMessage(m); err != nil {
		return run, fmt.Errorf("run bash: %w", err)
	}
	r.mu.Lock()
	ag := r.agent
	r.mu.Unlock()
	if ag != nil {
		msgs := append(ag.Messages(), session.ToLLM([]session.Message{m})...)
		if err := ag.SetMessages(msgs); err != nil {
			return run, fmt.Errorf("run bash: %w", err)
		}
	}
	return run, nil
}

// ContextTokens estimates the tokens of the conversation the model sees
// now: the usage of the last assistant answer plus an estimate of what
// came after it, as the reference's status line does.
// Without any usage reported (a scripted model) it is the estimate of
// every message.
func (r *Runtime) ContextTokens() int {
	msgs := r.session.Context()
	if n := session.EstimateContextTokens(msgs); n > 0 {
		return n
	}
	n := 0
	for _, m := range msgs {
		n += session.EstimateTokens(m)
	}
	return n
}

// History returns the conversation of the current session as the model
// sees it (for a front end to show after a resume).
func (r *Runtime) History() []llm.Message { return session.ToLLM(r.session.Context()) }

// Sessions lists the sessions of the runtime's session folder, the most
// recently active first (for a /resume picker).
//
// # Errors
//
// The folder exists but cannot be read.
func (r *Runtime) Sessions() ([]session.Info, error) {
	return session.List(SessionDir(r.piHome, r.cwd, r.baseSessionOptions()))
}
