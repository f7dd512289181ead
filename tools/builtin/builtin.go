// Package builtin owns the built-in tools read, write, edit, bash, grep, find
// and ls, with the model-visible texts of ../shared/tools-contract.md, and
// their shared parts: truncation, the bounded output accumulator, path
// resolution, the per-file mutation queue and atomic writes.
package builtin

import "github.com/pi-go/pi/runtime/tool"

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
