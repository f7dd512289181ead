package builtin

import (
	"context"
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

	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/internal/procs"
	"github.com/pi-go/pi/internal/sandbox"
	"github.com/pi-go/pi/runtime/tool"

	"golang.org/x/sys/unix"
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
	// bashUpdateEvery is the throttle of partial results.
	bashUpdateEvery = 100 * time.Millisecond
	// bashKillGrace is how long SIGTERM has before SIGKILL.
	bashKillGrace = 500 * time.Millisecond
	// bashPipeGrace is how long the output pipe is still read after the
	// shell exited, for a background process that holds it open.
	bashPipeGrace = 100 * time.Millisecond
	// bashReadChunk is the size of one read from the output pipe.
	bashReadChunk = 1 << 20
	// bashBatchAfter is how much a command prints before the reads of its
	// output are batched: a short command's output is taken at once.
	bashBatchAfter = 1 << 20
)

// bashArgs are the bash tool's arguments.
type bashArgs struct {
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout"`
}

// bashDetails are the details of a bash result: set when the output was
// truncated (final result) or as it streams (partial results).
type bashDetails struct {
	Truncation     *output.TailTruncation `json:"truncation,omitempty"`
	FullOutputPath string                 `json:"fullOutputPath,omitempty"`
}

// bashDefinition returns the bash tool: it runs a command with the
// configured shell (`SHELL -c COMMAND`, default /bin/bash) in the call's
// working directory, with stdin closed and stdout and stderr interleaved in
// one pipe. opts.CommandPrefix is put before the command (joined by a
// newline), then opts.SpawnHooks may rewrite command, cwd and env; a hook
// error stops the call with that reason. The command runs as a call of
// opts.Processes, in its own session (and cgroup, where cgroup v2 is
// writable); a timeout or a cancelled context kills every process it
// started. The result is the cleaned tail of the output (2000 lines /
// 50KB), with the complete raw output in a file of opts.OutputDir when it
// was longer (capped at opts.FullOutputMaxBytes, secrets of opts.Redactor
// replaced). The environment is pi's minus opts.HideEnv.
func bashDefinition(opts BashOptions) tool.ToolDefinition {
	if opts.OutputDir == nil {
		opts.OutputDir = NewOutputDir("")
	}
	if opts.Processes == nil {
		opts.Processes = NewProcesses()
	}
	return define(toolMeta{
		name:        "bash",
		description: bashDescription,
		parameters:  bashSchema,
		snippet:     bashPromptSnippet,
	}, func(ctx context.Context, call tool.Call, tc tool.Context, args bashArgs) (tool.Result, error) {
		return runBash(ctx, opts, call, tc, args)
	}, nil)
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

	acc := output.NewAccumulator(output.Limits{
		MaxLines: output.DefaultMaxLines, MaxBytes: output.DefaultMaxBytes,
		NewFile:      func() (*os.File, string, error) { return opts.OutputDir.create("pi-bash") },
		MaxFileBytes: fullOutputMax(opts.FullOutputMaxBytes), Redactor: opts.Redactor,
	})
	defer acc.Close()
	call.Update(tool.Result{Content: []tool.ContentBlock{}})
	if args.Timeout == nil && opts.DefaultTimeout > 0 {
		t := opts.DefaultTimeout
		args.Timeout = &t
	}
	var policy sandbox.Policy
	if opts.Sandbox != nil {
		if p := opts.Sandbox(); p != nil {
			policy = *p
		}
	}
	if policy.Active() && opts.Unsandboxed != nil && opts.Unsandboxed(args.Command) {
		policy = sandbox.Policy{}
	}
	l, err := shellLaunch(policy, opts, shell, spawn.Command, environList(spawn.Env))
	if err != nil {
		return tool.Result{}, fmt.Errorf("bash: %w", err)
	}
	home, _ := os.UserHomeDir()
	guard := policy.Guard(home)
	run, err := execShell(ctx, opts.Processes.set, l, spawn.Cwd, args.Timeout, acc, call)
	if err != nil {
		return tool.Result{}, err
	}
	acc.Finish()
	snap := acc.Snapshot()
	if cerr := acc.Close(); cerr != nil && snap.FileErr == nil {
		snap.FileErr = cerr
	}
	refused := append(policy.Refusals(snap.Content, spawn.Cwd, home), guard()...)
	res := withRefusals(bashResult(run, snap, args.Timeout), refused)
	if len(refused) > 0 && opts.AskRerun != nil && ctx.Err() == nil && opts.AskRerun(ctx, args.Command, refused) {
		return rerunOutside(ctx, opts, call, tc, args)
	}
	return res, nil
}

// RerunNote starts the result of a call re-run outside the sandbox.
const RerunNote = "The sandbox refused this command; the user approved one re-run outside the sandbox. Its result:\n\n"

// rerunOutside runs the call again without the sandbox (and without
// asking again), its result starting with RerunNote.
func rerunOutside(ctx context.Context, opts BashOptions, call tool.Call, tc tool.Context, args bashArgs) (tool.Result, error) {
	opts.Sandbox, opts.AskRerun = nil, nil
	res, err := runBash(ctx, opts, call, tc, args)
	if err != nil || len(res.Content) == 0 || res.Content[0].Type != "text" {
		return res, err
	}
	res.Content[0].Text = RerunNote + res.Content[0].Text
	return res, nil
}

// withRefusals adds the sandbox's refusal lines to the end of a result.
func withRefusals(res tool.Result, lines []string) tool.Result {
	if len(lines) == 0 || len(res.Content) == 0 {
		return res
	}
	last := len(res.Content) - 1
	if res.Content[last].Type == "text" {
		res.Content[last].Text = strings.TrimRight(res.Content[last].Text, "\n") + "\n\n" + strings.Join(lines, "\n")
	}
	return res
}

// execShell runs the shell as a call of set and streams its output into
// acc until the shell exits (then the pipe is read for a moment more), the
// timeout passes or ctx is cancelled (then every process of the call is
// killed).
func execShell(ctx context.Context, set *procs.Set, l launch, cwd string, timeout *float64, acc *output.Accumulator, call tool.Call) (bashRun, error) {
	r, batch, cmd, pc, err := startShell(set, l, cwd)
	if err != nil {
		return bashRun{}, err
	}
	s := streamOutput(r, batch, acc, call)
	run := waitShell(ctx, cmd, pc, timeout)
	s.stop()
	return run, nil
}

// startShell starts l (`SHELL -c COMMAND`, or the sandbox's helper
// around it, started with its attr, or through the sandbox's fork server)
// in cwd with its env (KEY=VALUE; the call's tag is added) as a call of
// set, with stdout and stderr
// interleaved in one pipe, whose read end it returns; batch reports that
// the pipe holds 1MB, so its reads may be batched (streamer.read).
func startShell(set *procs.Set, l launch, cwd string) (r *os.File, batch bool, cmd *exec.Cmd, pc *procs.Call, err error) {
	argv, env, attr := l.argv, l.env, l.attr
	r, w, err := os.Pipe()
	if err != nil {
		return nil, false, nil, nil, fmt.Errorf("bash output pipe: %w", err)
	}
	batch = procs.EnlargePipe(w)
	newCmd := func() *exec.Cmd {
		c := &exec.Cmd{
			Path:   argv[0],
			Args:   argv,
			Dir:    cwd,
			Env:    env,
			Stdout: w,
			Stderr: w,
		}
		if attr != nil {
			a := *attr
			c.SysProcAttr = &a
		}
		return c
	}
	if l.via != nil {
		cmd, pc, err = set.StartVia(newCmd, l.via)
		if errors.Is(err, sandbox.ErrServerGone) && l.ready() {
			// Its server died or was tampered with before it started the
			// command: a new one, once.
			cmd, pc, err = set.StartVia(newCmd, l.via)
		}
	} else {
		cmd, pc, err = set.Start(newCmd)
	}
	w.Close()
	if err != nil {
		r.Close()
		return nil, false, nil, nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	return r, batch, cmd, pc, nil
}

// streamer reads the output pipe into the accumulator and sends partial
// results: after a chunk the reader wakes the updater, unless an update is
// already on its way; the updater sends one at once when the last went out
// 100 ms ago or more, else when the 100 ms are over.
type streamer struct {
	r        *os.File
	batch    bool // pause after a read that drained the pipe (read)
	acc      *output.Accumulator
	call     tool.Call
	dirty    atomic.Bool
	pending  atomic.Bool
	kick     chan struct{}
	readDone chan struct{}
	stopped  chan struct{}
	wg       sync.WaitGroup
}

// streamOutput starts the reader and the updater.
func streamOutput(r *os.File, batch bool, acc *output.Accumulator, call tool.Call) *streamer {
	s := &streamer{r: r, batch: batch, acc: acc, call: call, kick: make(chan struct{}, 1),
		readDone: make(chan struct{}), stopped: make(chan struct{})}
	go s.read()
	s.wg.Add(1)
	go s.update()
	return s
}

// wake asks the updater for an update unless one is on its way.
func (s *streamer) wake() {
	if !s.pending.Swap(true) {
		s.kick <- struct{}{}
	}
}

// read copies the pipe into the accumulator until it ends (or its read
// deadline passes). Once a command has printed bashBatchAfter, a read that
// drained the pipe is followed by a pause for it to fill again: a command
// that prints a lot in small writes then costs a wake-up per pause instead
// of one per write (docs/performance.md, "bash streaming").
func (s *streamer) read() {
	defer close(s.readDone)
	buf := make([]byte, bashReadChunk)
	streamed := 0
	for {
		n, err := s.r.Read(buf)
		if n > 0 {
			s.acc.Write(buf[:n])
			s.dirty.Store(true)
			s.wake()
			streamed += n
		}
		if err != nil {
			return
		}
		if s.batch && n < len(buf) && streamed >= bashBatchAfter {
			procs.PipeRefillPause()
		}
	}
}

// update sends the throttled partial results until stop.
func (s *streamer) update() {
	defer s.wg.Done()
	var last time.Time
	for {
		select {
		case <-s.stopped:
			return
		case <-s.kick:
		}
		if wait := bashUpdateEvery - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-s.stopped:
				t.Stop()
				return
			case <-t.C:
			}
		}
		last = time.Now()
		if s.dirty.Swap(false) {
			s.call.Update(partialResult(s.acc.Snapshot()))
		}
		s.pending.Store(false)
		if s.dirty.Load() {
			s.wake() // output that came while this update was made
		}
	}
}

// stop is called once the shell is gone: a background process may still
// hold the pipe, so it is read for bashPipeGrace more, then closed; the
// updater stops and the output not sent yet goes out as a last update.
func (s *streamer) stop() {
	select {
	case <-s.readDone:
	case <-time.After(bashPipeGrace):
		if s.r.SetReadDeadline(time.Now()) == nil {
			<-s.readDone
		} // else the reader stays blocked until the holder exits; acc ignores it after finish
	}
	s.r.Close()
	close(s.stopped)
	s.wg.Wait()
	if s.dirty.Swap(false) {
		s.call.Update(partialResult(s.acc.Snapshot()))
	}
}

// waitShell waits for the shell to exit, or for the timeout or ctx to end
// first (then it kills every process of the call and waits for the shell),
// and tells the call the shell is gone.
func waitShell(ctx context.Context, cmd *exec.Cmd, pc *procs.Call, timeout *float64) bashRun {
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
		pc.Terminate(bashKillGrace)
		<-waitDone
	case <-ctx.Done():
		run.aborted = true
		pc.Terminate(bashKillGrace)
		<-waitDone
	}
	run.state = cmd.ProcessState
	pc.Exited()
	return run
}

// bashResult turns the run and the output into the tool result.
func bashResult(run bashRun, snap output.Snapshot, timeout *float64) tool.Result {
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
func formatBashOutput(s output.Snapshot) (string, *bashDetails) {
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
			output.FormatSize(shown), s.PartialLine, output.FormatSize(int(s.PartialLineBytes)), full)
	case t.TruncatedBy == "lines":
		text += fmt.Sprintf("\n\n[Showing lines %d-%d of %d. Full output: %s]", start, end, t.TotalLines, full)
	default:
		text += fmt.Sprintf("\n\n[Showing lines %d-%d of %d (%s limit). Full output: %s]",
			start, end, t.TotalLines, output.FormatSize(output.DefaultMaxBytes), full)
	}
	return text, &bashDetails{Truncation: &t, FullOutputPath: s.FullOutputPath}
}

// partialResult is a progress update: the output so far, without notices.
func partialResult(s output.Snapshot) tool.Result {
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
// without a call tag (procs.Set.Start adds the call's).
func environList(env map[string]string) []string {
	out := make([]string, 0, len(env)+1)
	for k, v := range env {
		if k == procs.MarkerEnv {
			continue
		}
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// fullOutputMax is the cap of a full-output file: n, or
// DefaultFullOutputMaxBytes when n is not positive.
func fullOutputMax(n int64) int64 {
	if n <= 0 {
		return DefaultFullOutputMaxBytes
	}
	return n
}

// signalName names a signal as "SIGKILL".
func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return "signal " + strconv.Itoa(int(sig))
}
