// Package builtin owns the built-in tools read, write, edit, bash, grep, find
// and ls, with the model-visible texts of ../shared/tools-contract.md, and
// their shared parts: truncation, the bounded output accumulator, path
// resolution, the per-file mutation queue and atomic writes.
package builtin

import (
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
	// DefaultTimeout, in seconds, applies to a call that gives no timeout
	// ("Command timed out after N seconds"); zero means none.
	DefaultTimeout float64
}

// DefaultActive are the tools active when pi.toml and flags say nothing.
var DefaultActive = []string{"read", "bash", "edit", "write"}

// Definitions returns the seven built-in tool definitions.
func Definitions(opts Options) []tool.ToolDefinition {
	return []tool.ToolDefinition{
		ReadDefinition(),
		BashDefinition(opts.Bash),
		EditDefinition(),
		WriteDefinition(),
		GrepDefinition(),
		FindDefinition(),
		LsDefinition(),
	}
}
