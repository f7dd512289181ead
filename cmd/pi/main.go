// Command pi is the coding-agent CLI: it runs the agent loop against any
// OpenAI-compatible model (or the built-in offline demo), runs single tool
// calls, installs and lists WebAssembly extensions, and configures MCP
// servers. It is thin: it parses
// flags, builds the runtime from pi.toml and flags, and runs.
package main

import (
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the run failed (model/provider error, bad configuration)
	exitUsage = 2 // the command line was wrong
)

// run is the whole program; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd, rest := "", args
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "version":
		return cmdVersion(rest[1:], stdout, stderr)
	case "tool":
		return cmdTool(rest[1:], stdout, stderr)
	case "tools":
		return cmdTools(rest[1:], stdout, stderr)
	case "ext":
		return cmdExt(rest[1:], stdout, stderr)
	case "mcp":
		return cmdMCP(rest[1:], stdout, stderr)
	case "trust":
		return cmdTrust(rest[1:], stdout, stderr, true)
	case "untrust":
		return cmdTrust(rest[1:], stdout, stderr, false)
	case "demo":
		return cmdDemo(rest[1:], stdout, stderr)
	case "help":
		return cmdHelp(rest[1:], stdout, stderr)
	}
	return cmdAgent(args, stdin, stdout, stderr)
}
