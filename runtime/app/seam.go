package app

import (
	"context"
	"encoding/json"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/tool"
	"github.com/pi-go/pi/tools/builtin"
)

// This file is what a conversation (package runtime/conversation) uses of
// the runtime: the extensions' input hooks, prompt hooks and events, the
// session they write to, the tool set's generation, a person's shell
// command and the provider of a model. The runtime holds no conversation
// state of its own: no agent, no session, no model choice.

// InputResult is what the extensions' input hooks made of a prompt.
type InputResult = extensions.InputResult

// Input runs the extensions' input hooks on a prompt in load order (ABI
// 1.1 `input`): each may pass it on, rewrite it, or handle it (the prompt
// then goes nowhere and Message is shown). Without extensions the text
// passes unchanged.
//
// # Errors
//
// A hook that failed: the prompt must not be sent.
func (r *Runtime) Input(ctx context.Context, text string, images []tool.ContentBlock) (InputResult, error) {
	host := r.extHost()
	if host == nil {
		return InputResult{Text: text}, nil
	}
	return host.Input(ctx, extensions.InputRequest{Text: text, Images: images, Mode: r.mode()})
}

// Mode is how the front end runs, as extensions are told (Options.Mode).
func (r *Runtime) Mode() string { return r.mode() }

// Warn tells the user w: through Options.OnWarning, else the log.
func (r *Runtime) Warn(w string) { r.warn(w) }

// ToolsGeneration counts the changes of the registry since Open (MCP
// servers' tools coming and going, see SyncTools): a conversation hands
// the loop new tools when it moved.
func (r *Runtime) ToolsGeneration() uint64 { return r.toolsGen.Load() }

// PromptHooks adds the extensions' before_agent_start and stop hooks to an
// agent's configuration.
func (r *Runtime) PromptHooks(cfg *agent.Config) { r.promptHooks(cfg) }

// EventSink passes each event to next, then the ones extensions take to
// the extension host, redacted first: the six of ABI 1.0, and the types
// an extension subscribed to (ABI 1.1 `events`: message_end,
// session_start, session_shutdown, compaction_start, compaction_end).
func (r *Runtime) EventSink(next func(agent.Event)) func(agent.Event) {
	return func(ev agent.Event) {
		if next != nil {
			next(ev)
		}
		host := r.extHost()
		if host == nil || !host.TakesEvent(string(ev.Type)) {
			return
		}
		raw, err := redactedJSON(r.redactor, ev)
		if err != nil {
			r.logger.Warn("extension event: cannot marshal event", "type", string(ev.Type), "error", err.Error())
			return
		}
		host.Event(r.eventContext(), raw)
	}
}

// BindSession makes current the source of the session that extensions'
// session.append and session.entries use (the conversation's, which
// changes with /new, /resume and /fork; in memory with --no-session);
// nil unbinds it, and they use a session in memory of the runtime's own
// (as under pi tool call and in the test kit).
func (r *Runtime) BindSession(current func() *session.Session) {
	if current == nil {
		r.session.Store(nil)
		return
	}
	r.session.Store(&current)
}

// errNoSession is the answer of ABI 1.2's session.* and agent.* without a
// conversation bound (BindConversation).
var errNoSession = extensions.ErrNoSession

// extSession is the session as extensions see it: session.append writes
// a custom entry on the current branch (the key redacted), session.entries
// lists them along the branch (ABI 1.1).
type extSession struct{ r *Runtime }

var _ extensions.Session = extSession{}

func (s extSession) current() (*session.Session, error) {
	f := s.r.session.Load()
	if f == nil {
		return s.r.memorySession()
	}
	sess := (*f)()
	if sess == nil {
		return s.r.memorySession()
	}
	return sess, nil
}

func (s extSession) AppendCustom(_ context.Context, _, customType string, data json.RawMessage) (string, error) {
	sess, err := s.current()
	if err != nil {
		return "", err
	}
	return sess.AppendCustom(customType, s.r.redactor.Bytes(data))
}

func (s extSession) CustomEntries(_ context.Context, _, customType string) ([]extensions.SessionEntry, error) {
	sess, err := s.current()
	if err != nil {
		return nil, err
	}
	var out []extensions.SessionEntry
	for _, e := range sess.CustomEntries(customType) {
		out = append(out, extensions.SessionEntry{ID: e.ID, CustomType: e.CustomType, Data: e.Data})
	}
	return out, nil
}

// BashResult is what RunBash reports (the reference agent's BashResult).
type BashResult = builtin.CommandResult

// RunBash runs a command a person typed (RPC bash) in the working
// directory the way the bash tool runs the model's: the same shell,
// command prefix, bash_spawn hooks, hidden variables and output limits; its
// processes belong to the runtime. It runs no tool hooks or permission
// rules: the person is the one asking. It has no timeout: cancel ctx to
// stop it. update, when not nil, receives the output so far (the API key
// is not redacted there: pass it through Redactor); the result's output is
// redacted.
//
// # Errors
//
// As builtin.RunCommand: a spawn hook's error, no shell, a shell that
// cannot start.
func (r *Runtime) RunBash(ctx context.Context, command string, update func(output string)) (BashResult, error) {
	res, err := builtin.RunCommand(ctx, *r.bashp.Load(), r.cwd, command, update)
	res.Output = r.redactor.String(res.Output)
	return res, err
}

// ProjectContentTrusted reports whether the project's own instructions
// for the model — its skills, prompt templates and agent definitions — may
// load: one rule for all three (config.Config.ProjectContentTrusted):
// trusted for this run (--trust, PI_TRUST=1), or its pi.toml is trusted
// and unchanged.
func (r *Runtime) ProjectContentTrusted() bool {
	return r.cfg.ProjectContentTrusted(r.piHome, r.opts.Trust)
}
