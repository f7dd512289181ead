package builtin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pi-go/pi/runtime/tool"
)

// Model-visible texts of the bash tool, as in the reference agent.
const (
	bashDescription = "Execute a bash command in the current working directory. Returns stdout and stderr. " +
		"Output is truncated to last 2000 lines or 50KB (whichever is hit first). " +
		"If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds."
	bashPromptSnippet = "Execute bash commands (ls, grep, find, etc.)"
	bashSchema        = `{"type":"object","required":["command"],"properties":{` +
		`"command":{"type":"string","description":"Bash command to execute"},` +
		`"timeout":{"type":"number","description":"Timeout in seconds (optional, no default timeout)"}}}`
)

const (
	// bashMarkerEnv is the environment variable that tags every process a
	// bash call starts: PI_BASH_CALL=<instance>-<call number>.
	bashMarkerEnv = "PI_BASH_CALL"
	// bashUpdateEvery is the throttle of partial results.
	bashUpdateEvery = 100 * time.Millisecond
	// bashKillGrace is how long SIGTERM has before SIGKILL.
	bashKillGrace = 500 * time.Millisecond
	// bashPipeGrace is how long the output pipe is still read after the
	// shell exited, for a background process that holds it open.
	bashPipeGrace = 100 * time.Millisecond
	// bashReadChunk is the size of one read from the output pipe.
	bashReadChunk = 256 << 10
)

// bashInstance tells this pi process's bash calls from another pi's.
var bashInstance = func() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

var bashCallSeq atomic.Uint64

// bashArgs are the bash tool's arguments.
type bashArgs struct {
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout"`
}

// bashDetails are the details of a bash result: set when the output was
// truncated (final result) or as it streams (partial results).
type bashDetails struct {
	Truncation     *bashTruncation `json:"truncation,omitempty"`
	FullOutputPath string          `json:"fullOutputPath,omitempty"`
}

// BashDefinition returns the bash tool: it runs a command with the configured
// shell (`SHELL -c COMMAND`, default /bin/bash) in the call's working
// directory, with stdin closed and stdout and stderr interleaved in one pipe.
// opts.CommandPrefix is put before the command (joined by a newline), then
// opts.SpawnHooks may rewrite command, cwd and env; a hook error stops the
// call with that reason. The command runs in its own session (and cgroup,
// where cgroup v2 is writable); a timeout or a cancelled context kills every
// process it started (see KillAllBash). The result is the cleaned tail of
// the output (2000 lines / 50KB), with the complete raw output in a file of
// opts.OutputDir when it was longer (capped at opts.FullOutputMaxBytes,
// secrets of opts.Redactor replaced). The environment is pi's minus
// opts.HideEnv.
func BashDefinition(opts BashOptions) tool.ToolDefinition {
	if opts.OutputDir == nil {
		opts.OutputDir = NewOutputDir("")
	}
	return tool.ToolDefinition{
		Name:          "bash",
		Label:         "bash",
		Description:   bashDescription,
		Parameters:    json.RawMessage(bashSchema),
		PromptSnippet: bashPromptSnippet,
		ExecutionMode: tool.Parallel,
		Source:        tool.Source{Kind: tool.SourceBuiltin},
		Execute: func(ctx context.Context, call tool.Call, tc tool.Context) (tool.Result, error) {
			var args bashArgs
			if err := json.Unmarshal(call.Input, &args); err != nil {
				return tool.Result{}, fmt.Errorf("decode bash arguments: %w", err)
			}
			return runBash(ctx, opts, call, tc, args)
		},
	}
}

// bashRun is the outcome of running the shell.
type bashRun struct {
	state    *os.ProcessState
	timedOut bool
	aborted  bool
}

func runBash(ctx context.Context, opts BashOptions, call tool.Call, tc tool.Context, args bashArgs) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.ErrorResult("Command aborted"), nil
	}
	command := args.Command
	if opts.CommandPrefix != "" {
		command = opts.CommandPrefix + "\n" + command
	}
	cwd := tc.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return tool.Result{}, fmt.Errorf("bash working directory: %w", err)
		}
		cwd = wd
	}
	spawn := tool.BashSpawn{Command: command, Cwd: cwd, Env: environMap(opts.HideEnv)}
	for _, h := range opts.SpawnHooks {
		next, err := h.Func(ctx, spawn)
		if err != nil {
			return tool.Result{}, fmt.Errorf("bash spawn hook %s: %w", h.Name, err)
		}
		spawn = mergeSpawn(spawn, next)
	}
	shell, err := resolveShell(opts.Shell)
	if err != nil {
		return tool.Result{}, err
	}
	if fi, err := os.Stat(spawn.Cwd); err != nil || !fi.IsDir() {
		return tool.Result{}, fmt.Errorf("Working directory does not exist: %s\nCannot execute bash commands.", spawn.Cwd)
	}

	if ctx.Err() != nil {
		return tool.ErrorResult("Command aborted"), nil
	}

	acc := newOutputAccumulator(accumulatorLimits{
		MaxLines: DefaultMaxLines, MaxBytes: DefaultMaxBytes, Prefix: "pi-bash",
		Dir: opts.OutputDir, MaxFileBytes: opts.FullOutputMaxBytes, Redactor: opts.Redactor,
	})
	defer acc.close()
	call.Update(tool.Result{Content: []tool.ContentBlock{}})
	if args.Timeout == nil && opts.DefaultTimeout > 0 {
		t := opts.DefaultTimeout
		args.Timeout = &t
	}
	run, err := execShell(ctx, shell, spawn, args.Timeout, acc, call)
	if err != nil {
		return tool.Result{}, err
	}
	acc.finish()
	snap := acc.snapshot()
	if cerr := acc.close(); cerr != nil && snap.FileErr == nil {
		snap.FileErr = cerr
	}
	return bashResult(run, snap, args.Timeout), nil
}

// execShell runs the shell and streams its output into acc until the shell
// exits (then the pipe is read for a moment more), the timeout passes or ctx
// is cancelled (then every process of the call is killed).
func execShell(ctx context.Context, shell string, spawn tool.BashSpawn, timeout *float64, acc *outputAccumulator, call tool.Call) (bashRun, error) {
	marker := bashInstance + "-" + strconv.FormatUint(bashCallSeq.Add(1), 10)
	env := environList(spawn.Env, marker)

	r, w, err := os.Pipe()
	if err != nil {
		return bashRun{}, fmt.Errorf("bash output pipe: %w", err)
	}
	enlargePipe(w)
	newCmd := func() *exec.Cmd {
		return &exec.Cmd{
			Path:   shell,
			Args:   []string{shell, "-c", spawn.Command},
			Dir:    spawn.Cwd,
			Env:    env,
			Stdout: w,
			Stderr: w,
		}
	}
	cmd, procs, err := startShell(newCmd, marker)
	if err != nil {
		r.Close()
		w.Close()
		return bashRun{}, fmt.Errorf("start %s: %w", shell, err)
	}
	w.Close()

	// Partial results: after a chunk the reader wakes the updater, unless
	// an update is already on its way; the updater sends one at once when
	// the last went out 100 ms ago or more, else when the 100 ms are over.
	var dirty, pending atomic.Bool
	kick := make(chan struct{}, 1)
	wake := func() {
		if !pending.Swap(true) {
			kick <- struct{}{}
		}
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, bashReadChunk)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				acc.Write(buf[:n])
				dirty.Store(true)
				wake()
			}
			if err != nil {
				return
			}
		}
	}()

	var wg sync.WaitGroup
	stopUpdates := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		var last time.Time
		for {
			select {
			case <-stopUpdates:
				return
			case <-kick:
			}
			if wait := bashUpdateEvery - time.Since(last); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-stopUpdates:
					t.Stop()
					return
				case <-t.C:
				}
			}
			last = time.Now()
			if dirty.Swap(false) {
				call.Update(partialResult(acc.snapshot()))
			}
			pending.Store(false)
			if dirty.Load() {
				wake() // output that came while this update was made
			}
		}
	}()

	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	var timer <-chan time.Time
	if timeout != nil && *timeout > 0 && *timeout < 1e9 {
		t := time.NewTimer(time.Duration(*timeout * float64(time.Second)))
		defer t.Stop()
		timer = t.C
	}
	var run bashRun
	select {
	case <-waitDone:
	case <-timer:
		run.timedOut = true
		procs.terminate(bashKillGrace)
		<-waitDone
	case <-ctx.Done():
		run.aborted = true
		procs.terminate(bashKillGrace)
		<-waitDone
	}
	run.state = cmd.ProcessState
	procs.shellExited()

	// The shell is gone; a background process may still hold the pipe.
	select {
	case <-readDone:
	case <-time.After(bashPipeGrace):
		if r.SetReadDeadline(time.Now()) == nil {
			<-readDone
		} // else the reader stays blocked until the holder exits; acc ignores it after finish
	}
	r.Close()
	close(stopUpdates)
	wg.Wait()
	if dirty.Swap(false) {
		call.Update(partialResult(acc.snapshot()))
	}
	return run, nil
}

// bashResult turns the run and the output into the tool result.
func bashResult(run bashRun, snap outputSnapshot, timeout *float64) tool.Result {
	text, details := formatBashOutput(snap)
	status := ""
	switch {
	case run.aborted:
		status = "Command aborted"
	case run.timedOut:
		status = "Command timed out after " + strconv.FormatFloat(*timeout, 'f', -1, 64) + " seconds"
	case run.state != nil:
		if ws, ok := run.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = "Command killed by signal " + signalName(ws.Signal())
		} else if code := run.state.ExitCode(); code != 0 {
			if text == "" {
				text = "(no output)"
			}
			status = "Command exited with code " + strconv.Itoa(code)
		}
	}
	res := tool.Result{}
	if details != nil {
		res.Details = details
	}
	if status == "" {
		if text == "" {
			text = "(no output)"
		}
		res.Content = []tool.ContentBlock{tool.Text(text)}
		return res
	}
	if text != "" {
		text += "\n\n"
	}
	res.Content = []tool.ContentBlock{tool.Text(text + status)}
	res.IsError = true
	return res
}

// formatBashOutput returns the output text with its truncation notice, and
// the details when it was truncated.
func formatBashOutput(s outputSnapshot) (string, *bashDetails) {
	text := s.Content
	t := s.Truncation
	if !t.Truncated {
		return text, nil
	}
	full := s.FullOutputPath
	if full == "" {
		full = "(not saved"
		if s.FileErr != nil {
			full += ": " + s.FileErr.Error()
		}
		full += ")"
	}
	end := t.TotalLines
	start := end - int64(t.OutputLines) + 1
	switch {
	case t.LastLinePartial:
		shown := len(strings.TrimSuffix(s.Content, "\n"))
		text += fmt.Sprintf("\n\n[Showing last %s of line %d (line is %s). Full output: %s]",
			FormatSize(shown), s.PartialLine, FormatSize(int(s.PartialLineBytes)), full)
	case t.TruncatedBy == "lines":
		text += fmt.Sprintf("\n\n[Showing lines %d-%d of %d. Full output: %s]", start, end, t.TotalLines, full)
	default:
		text += fmt.Sprintf("\n\n[Showing lines %d-%d of %d (%s limit). Full output: %s]",
			start, end, t.TotalLines, FormatSize(DefaultMaxBytes), full)
	}
	return text, &bashDetails{Truncation: &t, FullOutputPath: s.FullOutputPath}
}

// partialResult is a progress update: the output so far, without notices.
func partialResult(s outputSnapshot) tool.Result {
	d := &bashDetails{FullOutputPath: s.FullOutputPath}
	if s.Truncation.Truncated {
		t := s.Truncation
		d.Truncation = &t
	}
	return tool.Result{Content: []tool.ContentBlock{tool.Text(s.Content)}, Details: d}
}

// resolveShell picks the shell: the configured one (which must exist), else
// /bin/bash, else bash on PATH, else sh.
func resolveShell(configured string) (string, error) {
	if configured != "" {
		if _, err := os.Stat(configured); err != nil {
			if p, lerr := exec.LookPath(configured); lerr == nil {
				return p, nil
			}
			return "", fmt.Errorf("Custom shell path not found: %s", configured)
		}
		return configured, nil
	}
	if _, err := os.Stat("/bin/bash"); err == nil {
		return "/bin/bash", nil
	}
	for _, name := range []string{"bash", "sh"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no shell found: neither /bin/bash, bash nor sh is on PATH")
}

// mergeSpawn applies a hook's answer: an empty command or cwd and a nil env
// keep the previous value.
func mergeSpawn(prev, next tool.BashSpawn) tool.BashSpawn {
	if next.Command == "" {
		next.Command = prev.Command
	}
	if next.Cwd == "" {
		next.Cwd = prev.Cwd
	}
	if next.Env == nil {
		next.Env = prev.Env
	}
	return next
}

// environMap is pi's environment as a map, without the hidden names.
func environMap(hide []string) map[string]string {
	env := os.Environ()
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" && !slices.Contains(hide, k) {
			m[k] = v
		}
	}
	return m
}

// environList turns the spawn environment into KEY=VALUE pairs (sorted),
// with the call's marker.
func environList(env map[string]string, marker string) []string {
	out := make([]string, 0, len(env)+1)
	for k, v := range env {
		if k == bashMarkerEnv {
			continue
		}
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return append(out, bashMarkerEnv+"="+marker)
}
