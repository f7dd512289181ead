// Command pi is the coding-agent CLI: it runs the agent loop against any
// OpenAI-compatible model (or the built-in offline demo), runs single tool
// calls, installs and lists WebAssembly extensions, and configures MCP
// servers. It is thin: it parses
// flags, builds the runtime from pi.toml and flags, and runs.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/runtime/app"
)

func main() {
	os.Exit(program(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// program is the pi process, args its real command line (os.Args[1:]): it
// takes an --api-key value out of the command line the system shows
// (hideKeyArgs), makes the process non-dumpable, so that nothing pi starts
// can read the key from pi's environment or memory, and a child subreaper,
// so that orphans of bash calls are re-parented to pi, where Runtime.Close
// and a call's timeout can find them (properties of the process, set once,
// before any runtime starts), then runs.
func program(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	args = hideKeyArgs(args)
	if err := app.ProtectProcess(); err != nil {
		fmt.Fprintf(stderr, "pi: warning: %v; processes that pi starts may read its environment (and the API key in it)\n", err)
	}
	if err := app.BecomeSubreaper(); err != nil {
		fmt.Fprintf(stderr, "pi: warning: %v; processes that bash commands detach may outlive them\n", err)
	}
	return run(args, stdin, stdout, stderr)
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the run failed (model/provider error, bad configuration)
	exitUsage = 2 // the command line was wrong
)

// run is the whole program; it returns the exit code. Everything it
// writes goes through termtext's rule (escape and other control
// characters dropped): what pi prints carries text it did not write (the
// model's, tools', extensions', MCP servers', session files', errors
// quoting them, log lines). What must reach the terminal as written asks
// for termtext.Raw: the TUI's screen (it cleans what it shows), the
// spinner and the compile progress (pi's own carriage returns); JSON
// output goes through termtext.NewJSONWriter (exact text; what a terminal
// would act on escaped as \uXXXX).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	stdout, stderr = termtext.NewWriter(stdout), termtext.NewWriter(stderr)
	args = hoistCommand(args) // pi --trust tool call ...: flags before a subcommand
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
	case "skills":
		return cmdSkills(rest[1:], stdout, stderr)
	case "trust":
		return cmdTrust(rest[1:], stdout, stderr, true)
	case "untrust":
		return cmdTrust(rest[1:], stdout, stderr, false)
	case "permissions":
		return cmdPermissions(rest[1:], stdout, stderr)
	case "sessions":
		return cmdSessions(rest[1:], stdin, stdout, stderr)
	case "models":
		return cmdModels(rest[1:], stdout, stderr)
	case "demo":
		return cmdDemo(rest[1:], stdout, stderr)
	case "sandbox":
		return cmdSandbox(rest[1:], stdout, stderr)
	case "fleet":
		return cmdFleet(rest[1:], stdin, stdout, stderr)
	case "doctor":
		return cmdDoctor(rest[1:], stdout, stderr)
	case "help":
		return cmdHelp(rest[1:], stdout, stderr)
	}
	if code, bad := unknownCommand(args, stderr); bad {
		return code
	}
	return cmdAgent(args, stdin, stdout, stderr)
}
