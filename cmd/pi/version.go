package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
		fmt.Fprintln(stdout, "Usage: pi version\n\nPrints pi's version, the Go version and platform it was built with, and the ABI version of extensions it runs.")
		return exitOK
	}
	if len(args) > 0 {
		return usageError(stderr, "version", "unexpected argument %q", args[0])
	}
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " " + s.Value[:12]
			}
		}
	}
	fmt.Fprintf(stdout, "pi %s%s (%s %s/%s, extension ABI 1.1)\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}

const mainUsage = `
pi — a coding agent whose tools you can extend with WebAssembly.

Usage:
  pi [flags] [PROMPT]           interactive session (PROMPT optional) in the terminal UI
  pi -p "PROMPT" [flags]        print mode: answer once, stream the text to stdout
  pi -p @FILE "PROMPT"          attach files (text inline, images as images)
  pi --mode json -p "PROMPT"    the run's events as JSON lines on stdout
  pi --mode rpc                 the reference agent's RPC protocol on stdin/stdout
  pi demo                       an offline demo: a scripted model edits a sample project
  pi -c | -r | --session ID    continue the latest session, pick one, or resume one
  pi sessions list [--json]     this directory's sessions (the reference agent's format)
  pi models [--provider P]      the providers and models pi knows, and which are usable
  pi tool call NAME 'JSON'      run one tool call and print its result as JSON
  pi tools list [--json]        the registered tools, their source and whether active
  pi ext install FILE.wasm      check an extension and add it to pi.toml
                                (--grant KIND=VALUE, --ext-config KEY=VALUE)
  pi ext update NAME [FILE]     replace its module after a rebuild, keeping
                                grants, config and trust
  pi ext list | remove NAME     the installed extensions
  pi ext new NAME --lang L      a new extension project (go, c, rust, wat)
  pi ext dev DIR [--watch]      rebuild a project and update the installed copy
  pi mcp add NAME -- CMD ARGS   add an MCP server (its tools: mcp__NAME__TOOL)
  pi mcp list [--json] | remove NAME
                                the MCP servers, their state and tools
  pi skills list [--json]       the skills and prompt templates found, and those
                                skipped or shadowed, with why
  pi trust | untrust            allow (or stop allowing) this project's pi.toml to run code
  pi permissions check TOOL 'JSON'  what the [permissions] rules decide about a call
  pi permissions list           the permission rules, in the order they apply
  pi sandbox check -- CMD ARGS  run a command under the configured sandbox
  pi doctor                     the kernel's sandbox support, the sandbox in effect
  pi fleet submit|worker|...    many runs over NATS JetStream (docs/fleet.md)
  pi version | --version | -v   version information

A prompt that starts with /NAME runs a slash command (interactive or -p):
/help lists pi's own and the extensions' commands, the prompt templates
(/NAME ARGS) and the skills (/skill:NAME ARGS).

Run 'pi COMMAND --help' for a command's flags. The model comes from
--provider / --model PROVIDER/ID / --base-url / --api-key, else [model] in
pi.toml, else OPENAI_BASE_URL and OPENAI_API_KEY, else the first provider
whose key is set (docs/models.md; $PI_HOME/models.json adds providers);
--thinking LEVEL sets how hard a reasoning model thinks. With no key
configured, use 'pi demo' or --script FILE.

Configuration: ./pi.toml (or the nearest one up to the project root, the
nearest folder with .git or .pi/) over $PI_HOME/pi.toml ($PI_HOME defaults to
~/.pi/agent). Docs: docs/ in the source tree.
`

func cmdHelp(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return run([]string{args[0], "--help"}, strings.NewReader(""), stdout, stderr)
	}
	fmt.Fprintln(stdout, strings.TrimSpace(mainUsage))
	return exitOK
}
