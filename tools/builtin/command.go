package builtin

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/internal/sandbox"
	"github.com/pi-go/pi/runtime/tool"
)

// CommandResult is what RunCommand reports, in the reference agent's
// BashResult terms.
type CommandResult struct {
	// Output is the cleaned tail of the output (2000 lines / 50KB), with
	// no notices added.
	Output string
	// ExitCode is the shell's exit code; nil when it was cancelled or
	// killed by a signal.
	ExitCode *int
	// Cancelled: ctx ended before the command did (its processes were
	// killed).
	Cancelled bool
	// Truncated: Output is only the tail; FullOutputPath holds all of it
	// (capped, the API key replaced), "" when it could not be saved.
	Truncated      bool
	FullOutputPath string
}

// RunCommand runs a command a person typed (the RPC bash command, the
// TUI's !cmd) the way the bash tool runs the model's: the same shell,
// command prefix, spawn hooks, hidden variables, process owner, output
// limits and full-output file, in cwd. It has no timeout (the person
// cancels ctx) and runs no tool hooks; it is sandboxed (opts.Sandbox, the
// refusal lines added to Output) only with opts.SandboxUserCommands: by
// default the person is the one asking.
// update, when not nil, receives the output so far as it streams.
//
// # Errors
//
// A spawn hook's error, no usable shell, a working directory that does not
// exist, or a shell that cannot be started.
func RunCommand(ctx context.Context, opts BashOptions, cwd, command string, update func(output string)) (CommandResult, error) {
	if opts.OutputDir == nil {
		opts.OutputDir = NewOutputDir("")
	}
	if opts.Processes == nil {
		opts.Processes = NewProcesses()
	}
	if opts.CommandPrefix != "" {
		command = opts.CommandPrefix + "\n" + command
	}
	spawn := tool.BashSpawn{Command: command, Cwd: cwd, Env: environMap(opts.HideEnv)}
	for _, h := range opts.SpawnHooks {
		next, err := h.Func(ctx, spawn)
		if err != nil {
			return CommandResult{}, fmt.Errorf("bash spawn hook %s: %w", h.Name, err)
		}
		spawn = mergeSpawn(spawn, next)
	}
	shell, err := resolveShell(opts.Shell)
	if err != nil {
		return CommandResult{}, err
	}
	if fi, err := os.Stat(spawn.Cwd); err != nil || !fi.IsDir() {
		return CommandResult{}, fmt.Errorf("run command: working directory does not exist: %s", spawn.Cwd)
	}
	if ctx.Err() != nil {
		return CommandResult{Cancelled: true}, nil
	}
	acc := output.NewAccumulator(output.Limits{
		MaxLines: output.DefaultMaxLines, MaxBytes: output.DefaultMaxBytes,
		NewFile:      func() (*os.File, string, error) { return opts.OutputDir.create("pi-bash") },
		MaxFileBytes: fullOutputMax(opts.FullOutputMaxBytes), Redactor: opts.Redactor,
	})
	defer acc.Close()
	call := tool.NewCall("", nil, func(r tool.Result) {
		if update != nil && len(r.Content) > 0 {
			update(r.Content[0].Text)
		}
	})
	var policy sandbox.Policy
	if opts.SandboxUserCommands && opts.Sandbox != nil {
		if p := opts.Sandbox(); p != nil {
			policy = *p
		}
	}
	l, err := shellLaunch(policy, opts, shell, spawn.Command, environList(spawn.Env))
	if err != nil {
		return CommandResult{}, fmt.Errorf("run command: %w", err)
	}
	home, _ := os.UserHomeDir()
	guard := policy.Guard(home)
	run, err := execShell(ctx, opts.Processes.set, l, spawn.Cwd, nil, acc, call)
	if err != nil {
		return CommandResult{}, err
	}
	acc.Finish()
	snap := acc.Snapshot()
	acc.Close()
	if refused := append(policy.Refusals(snap.Content, spawn.Cwd, home), guard()...); len(refused) > 0 {
		snap.Content = strings.TrimRight(snap.Content, "\n") + "\n\n" + strings.Join(refused, "\n")
	}
	res := CommandResult{Output: snap.Content, Cancelled: run.aborted, Truncated: snap.Truncation.Truncated, FullOutputPath: snap.FullOutputPath}
	if run.state != nil && !run.aborted {
		if ws, ok := run.state.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			code := run.state.ExitCode()
			res.ExitCode = &code
		}
	}
	return res, nil
}
