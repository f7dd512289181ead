package app

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/tool"
)

// This file holds what the terminal UI asks of the runtime between runs
// (control.go and stats.go hold what it shares with RPC: sessions, the
// model): the session's name, the model's name, the context in use, and a
// person's own shell command run into the conversation. None of these may be
// called while the agent runs or a tool call is in progress; after a
// session or model change the front end builds its agent again with
// NewAgent (the agent goes on from the session, as a resumed one does).

// MaxSessionNameLen bounds a session name, in bytes.
const MaxSessionNameLen = 200

// SessionName is the current session's display name ("" when it has
// none).
func (r *Runtime) SessionName() string { return r.Session().Name() }

// SetSessionName names the current session (a session_info entry, as the
// reference writes for /name). The name is one line, trimmed, with the
// API key redacted.
//
// ModelName is the name of the model the next NewAgent talks to ("" when
// none is configured).
func (r *Runtime) ModelName() string {
	s, _ := ResolveModel(r.cfg, r.modelOptions())
	return s.Name
}

// SetModel makes name the model of the next NewAgent (/model), on the same
// endpoint and key.
//
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

// exitCodeRE finds the exit code in a bash result; compiled on first use
// (package init runs on every start of pi).
var exitCodeRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`Command exited with code (\d+)\s*$`)
})

// RunShellCommand (the TUI's !cmd) runs command with the bash tool through
// the whole call pipeline
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
func (r *Runtime) RunShellCommand(ctx context.Context, command string, update tool.UpdateFunc) (*BashRun, error) {
	input, _ := json.Marshal(map[string]string{"command": command})
	id := "bang_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	res, err := r.CallTool(ctx, "bash", id, input, update)
	if err != nil {
		return nil, err
	}
	run := &BashRun{Command: command, Result: res}
	text := res.Text()
	if m := exitCodeRE().FindStringSubmatch(text); m != nil {
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
	if _, err := r.Session().AppendMessage(m); err != nil {
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
	msgs := r.Session().Context()
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
func (r *Runtime) History() []llm.Message { return session.ToLLM(r.Session().Context()) }

// Sessions lists the sessions of the runtime's session folder, the most
// recently active first (for a /resume picker).
//
// # Errors
//
// The folder exists but cannot be read.
func (r *Runtime) Sessions() ([]session.Info, error) {
	return session.List(SessionDir(r.piHome, r.cwd, r.sessionOptions()))
}
