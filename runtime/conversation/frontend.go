package conversation

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/tool"
)

// This file holds what front ends show between runs: the session's name,
// the model's name, the context in use, and a person's own shell command
// (!cmd) run into the conversation.

// MaxSessionNameLen bounds a session name, in bytes.
const MaxSessionNameLen = 200

// SessionName is the current session's display name ("" when it has
// none).
func (c *Conversation) SessionName() string { return c.Session().Name() }

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

// RunShellCommand (!cmd in the TUI and the line mode) runs command with the bash tool through
// the whole call pipeline
// (tool_call hooks, permissions, approval, tool_result hooks), as the
// model's call would run, and adds it to the conversation the way the
// reference does: a bashExecution message in the session, which the model
// sees as a user message with the command and its output. update receives
// the output as it streams. While a run goes on the command runs, and the
// message joins the conversation when the run ends.
//
// # Errors
//
// No bash tool is registered; the session cannot be written.
func (c *Conversation) RunShellCommand(ctx context.Context, command string, update tool.UpdateFunc) (*BashRun, error) {
	command, own, err := c.userBash(ctx, command)
	if err != nil {
		return nil, err
	}
	if own != nil {
		return c.ownShellResult(command, *own)
	}
	input, _ := json.Marshal(map[string]string{"command": command})
	id := "bang_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	res, err := c.rt.CallTool(ctx, "bash", id, input, update)
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
		Command: c.rt.Redactor().String(command), Output: text, ExitCode: run.ExitCode,
		Cancelled: run.Cancelled, Truncated: d.FullOutputPath != "", FullOutputPath: d.FullOutputPath,
	}
	c.mu.Lock()
	if c.running > 0 {
		c.pendingBash = append(c.pendingBash, pendingBash{command: command, msg: &m})
		c.mu.Unlock()
		return run, nil
	}
	c.mu.Unlock()
	return run, c.appendMessage("run bash", m)
}

// ContextTokens estimates the tokens of the conversation the model sees
// now: the usage of the last assistant answer plus an estimate of what
// came after it, as the reference's status line does.
// Without any usage reported (a scripted model) it is the estimate of
// every message.
func (c *Conversation) ContextTokens() int {
	// The entries' infos, not the messages: the footer asks after every
	// turn, and a long session is not decoded again each time.
	infos := session.ContextInfos(c.Session().Branch())
	if n := session.EstimateInfoTokens(infos); n > 0 {
		return n
	}
	n := 0
	for _, i := range infos {
		n += i.Tokens
	}
	return n
}

// Sessions lists the sessions of the conversation's session folder, the most
// recently active first (for a /resume picker).
//
// # Errors
//
// The folder exists but cannot be read.
func (c *Conversation) Sessions() ([]session.Info, error) {
	return session.List(SessionDir(c.rt.PIHome(), c.rt.Cwd(), c.sessionOptions()))
}
