package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/pi-go/pi/runtime/app"
)

const sandboxUsage = `
Usage: pi sandbox check [flags] -- COMMAND [ARG...]

Runs COMMAND (with bash, as the model's bash tool runs it) under the
sandbox pi.toml configures ([sandbox], or --sandbox MODE), and prints what
happened: the sandbox in effect, the command's output, and a "Sandbox
refused:" line for each write or connection the sandbox stopped. Use it to
try a build before the model does.

Examples:
  pi sandbox check -- go build ./...
  pi sandbox check --sandbox read-only -- touch x

See docs/sandbox.md for the modes and what they protect.
`

const doctorUsage = `
Usage: pi doctor [flags]

Reports what this system offers pi: the kernel's sandbox support
(Landlock, user namespaces) and the sandbox the current project gets.
`

func cmdSandbox(args []string, stdout, stderr io.Writer) int {
	if code, done := groupHelp(args, sandboxUsage, stdout, stderr); done {
		return code
	}
	if args[0] != "check" {
		return usageError(stderr, "sandbox", "unknown subcommand %q (the subcommand is 'check')", args[0])
	}
	var f commonFlags
	fs := newFlagSet("pi sandbox check", sandboxUsage, stdout, stderr)
	f.register(fs)
	pos, code, done := parseArgs(fs, args[1:])
	if done {
		return code
	}
	if len(pos) == 0 {
		return usageError(stderr, "sandbox check", "want a command after --")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := f.appOptions(stderr, app.ModelOptions{})
	opts.Mode, opts.MCPStart, opts.Tools = app.ModeTool, app.MCPLazy, []string{"bash"}
	rt, err := app.Open(ctx, opts)
	if err != nil {
		return openFailed(stderr, err, "")
	}
	defer rt.Close()
	info := rt.Sandbox()
	printSandbox(stdout, info)
	printSandboxServer(stdout, rt, info)
	input, _ := json.Marshal(map[string]any{"command": shellJoin(pos)})
	res, err := rt.CallTool(ctx, "bash", "check_1", input, nil)
	if err != nil {
		fmt.Fprintf(stderr, "pi: %v\n", err)
		return exitError
	}
	fmt.Fprintln(stdout, "---")
	fmt.Fprintln(stdout, strings.TrimRight(res.Text(), "\n"))
	if res.IsError {
		return exitError
	}
	return exitOK
}

// printSandbox says which sandbox is in effect.
// printSandboxServer says how commands start under the sandbox: through
// the fork server, or in the per-call helper and why.
func printSandboxServer(w io.Writer, rt *app.Runtime, info app.SandboxInfo) {
	if info.Mode == "off" {
		return
	}
	switch served, why := rt.SandboxServer(); {
	case served:
		fmt.Fprintln(w, "commands start through the sandbox's fork server")
	case why != nil:
		fmt.Fprintf(w, "commands start in the per-call helper (slower): %v\n", why)
	}
}

func printSandbox(w io.Writer, s app.SandboxInfo) {
	if s.Mode == "off" {
		line := "sandbox: off"
		if s.Off != "" {
			line += " (the default sandbox cannot run here: " + s.Off + ")"
		}
		fmt.Fprintln(w, line)
		return
	}
	fmt.Fprintf(w, "sandbox: %s, network %s\n", s.Mode, s.Network)
	if s.Mode == "workspace-write" {
		fmt.Fprintf(w, "writable: %s\n", strings.Join(s.Writable, ", "))
	}
	if s.Mode != "full" {
		fmt.Fprintf(w, "read-only inside them: %s\n", strings.Join(s.Protected, ", "))
	}
}

// shellJoin quotes args for bash, each as one word.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

func cmdDoctor(args []string, stdout, stderr io.Writer) int {
	var f commonFlags
	fs := newFlagSet("pi doctor", doctorUsage, stdout, stderr)
	f.register(fs)
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) != 0 {
		return usageError(stderr, "doctor", "takes no arguments, got %q", pos[0])
	}
	sup := app.ProbeSandbox()
	landlock := "missing"
	if sup.LandlockABI > 0 {
		landlock = fmt.Sprintf("ABI %d", sup.LandlockABI)
	}
	userns := "missing"
	if sup.UserNS {
		userns = "available"
	}
	fmt.Fprintf(stdout, "kernel: Landlock %s, user namespaces %s\n", landlock, userns)
	if sup.Missing != "" {
		fmt.Fprintf(stdout, "missing: %s\n", sup.Missing)
	}
	opts := f.appOptions(stderr, app.ModelOptions{})
	opts.Mode, opts.MCPStart, opts.Tools = app.ModeTool, app.MCPLazy, []string{"bash"}
	rt, err := app.Open(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(stdout, "sandbox: cannot start: %v\n", err)
		return exitError
	}
	defer rt.Close()
	info := rt.Sandbox()
	printSandbox(stdout, info)
	printSandboxServer(stdout, rt, info)
	if sup.Missing != "" {
		return exitError
	}
	return exitOK
}
