// Package builtin owns the built-in tools read, write, edit, bash, grep, find
// and ls, with the model-visible texts of docs/tools.md (the tools contract). A
// program gets them from Definitions; what they share lives in internal
// packages: path matching and the walk (internal/gitignore), output
// truncation and the bash output accumulator (internal/output), process
// control (internal/procs), the file lock and bounded reads
// (internal/fileutil), images (internal/imageutil) and the atomic writer
// (internal/atomicfile).
//
// Nothing here changes the process: the bash tool's processes belong to the
// Processes value its options name, and its full-output files to the
// OutputDir; whoever builds the definitions closes both. Making the process
// a child subreaper is the program's choice (app.BecomeSubreaper).
package builtin

import (
	"context"
	"github.com/pi-go/pi/internal/procs"
	"github.com/pi-go/pi/internal/sandbox"
	"github.com/pi-go/pi/runtime/redact"
	"github.com/pi-go/pi/runtime/tool"
)

// Options configure the built-in tools.
type Options struct {
	Bash BashOptions
}

// BashOptions configure how bash spawns commands.
type BashOptions struct {
	// Shell is the shell binary, run as `SHELL -c COMMAND`; default /bin/bash
	// (or sh when bash is absent).
	Shell string
	// CommandPrefix is put before every command, joined by a newline.
	CommandPrefix string
	// SpawnHooks rewrite command, cwd and env, in order, after the prefix.
	SpawnHooks []tool.SpawnHook
	// HideEnv names variables of pi's environment that commands (and spawn
	// hooks) never get, such as the one holding the model's API key. A
	// spawn hook may still set one of these names itself.
	HideEnv []string
	// Processes owns the processes the calls start. When nil, the
	// definition makes its own, which nothing closes: a caller that wants
	// what the calls left running ended passes one and closes it when done.
	Processes *Processes
	// OutputDir holds the full-output files. When nil, the definition
	// makes its own under $TMPDIR, which nothing removes: a caller that
	// wants the files gone passes one and closes it when done.
	OutputDir *OutputDir
	// FullOutputMaxBytes caps each full-output file; at the cap the file
	// stops growing and ends with a line saying it was cut. Zero means
	// DefaultFullOutputMaxBytes.
	FullOutputMaxBytes int64
	// Redactor's secrets (the model's API key) are replaced in the
	// full-output files. The model-visible result is left to the caller's
	// tool_result redaction.
	Redactor *redact.Redactor
	// Sandbox, called at each command, says under which kernel sandbox it
	// runs (internal/sandbox, docs/sandbox.md): a nil func or policy, or
	// one that is not Active, runs it as it is. What the sandbox refused is
	// named in the result, one "Sandbox refused: ..." line each.
	Sandbox func() *sandbox.Policy
	// SandboxHelper is the program that applies the sandbox between fork
	// and exec (any program linking internal/sandbox serves); "" is the
	// running program (os.Executable).
	SandboxHelper string
	// Unsandboxed, when set, is asked about each call's command (the
	// model's, before CommandPrefix and spawn hooks): true runs it without
	// the sandbox (a permission rule with sandbox = "off" covers it).
	Unsandboxed func(command string) bool
	// AskRerun, when set, is called after a sandboxed call whose result
	// has "Sandbox refused:" lines (refused): true runs the call once more
	// outside the sandbox, and that run's result is the call's. Only a
	// person may say yes (never headless).
	AskRerun func(ctx context.Context, command string, refused []string) bool
	// SandboxUserCommands puts the commands a person types (RunCommand)
	// under Sandbox too ([sandbox] user_commands); by default they run as
	// they are.
	SandboxUserCommands bool
	// sandboxPerCall starts every sandboxed command in the per-call helper,
	// never through a fork server (the benchmarks' comparison).
	sandboxPerCall bool
	// DefaultTimeout, in seconds, applies to a call that gives no timeout
	// ("Command timed out after N seconds"); zero means none.
	DefaultTimeout float64
}

// Processes owns the processes started by the bash calls of the
// definitions it is given to (BashOptions.Processes): each call runs in a
// session of its own, with a tag in its environment and, where cgroup v2 is
// writable, in a cgroup under this owner's own parent group. Close ends
// every process those calls left running and no other's, so two runtimes
// of one program never end each other's commands. It is safe for
// concurrent use.
type Processes struct{ set *procs.Set }

// NewProcesses returns an owner with no processes yet; it makes no cgroup
// until the first call.
func NewProcesses() *Processes { return &Processes{set: procs.NewSet()} }

// Close ends every live process the calls started (the shells of calls
// still running, their background jobs, daemons that detached with setsid
// or a double fork), SIGTERM first and SIGKILL after a short grace (the
// owner's cgroup whole, where there are cgroups), reaps them and removes
// the cgroups; later calls fail, saying the runtime is closing. It returns
// when the processes are gone, in about a second at most. A second Close
// does nothing.
func (p *Processes) Close() { p.set.Close() }

// DefaultActive names the tools active when pi.toml and flags say nothing:
// read, bash, edit and write. Each call returns a new slice.
func DefaultActive() []string { return []string{"read", "bash", "edit", "write"} }

// Definitions returns the seven built-in tool definitions: read, bash,
// edit, write, grep, find and ls.
func Definitions(opts Options) []tool.ToolDefinition {
	return []tool.ToolDefinition{
		readDefinition(),
		bashDefinition(opts.Bash),
		editDefinition(),
		writeDefinition(),
		grepDefinition(),
		findDefinition(),
		lsDefinition(),
	}
}
