package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/manage"
)

const mcpUsage = `
Usage:
  pi mcp list [--json] [--no-start]
  pi mcp add NAME [--global] [--env KEY=VALUE ...] [--tools LIST] [--timeout-ms N] [--activate] -- COMMAND [ARGS...]
  pi mcp add NAME --url URL [--header NAME=VALUE ...] [--global] [--tools LIST] [--activate]
  pi mcp remove NAME [--global]

MCP servers are a second source of tools beside extensions: each tool of
the server NAME is registered as mcp__NAME__TOOL, active by default, and
runs through the same hooks and permission rules as every other tool.

list shows every [[mcp]] server of the global and the project pi.toml: it
starts each enabled server of a trusted file to show its state and tools
(--no-start shows the cached tools instead), then ends it.

add appends an [[mcp]] block to the project's pi.toml (or, with --global,
$PI_HOME/pi.toml), keeping the rest of the file as it was. Values of --env
and --header may hold ${VAR}, read from the environment when the server
starts (quote them so the shell leaves them alone). A project's servers
start only when the project is trusted; adding to a trusted project keeps
it trusted. When a pi.toml sets [tools] active, the server's tools are off
until that list names them: add says so, and --activate adds them (the
tools --tools names, else those the server lists when pi starts it once).

remove deletes the server's block from pi.toml.

Examples:
  pi mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .
  pi mcp add gh --url https://api.githubcopilot.com/mcp/ --header 'Authorization=Bearer ${GITHUB_TOKEN}'
  pi tool call mcp__fs__read_text_file '{"path":"README.md"}'
`

func cmdMCP(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprintln(stderr, strings.TrimSpace(mcpUsage))
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	switch args[0] {
	case "list", "ls":
		return cmdMCPList(args[1:], stdout, stderr)
	case "add":
		return cmdMCPAdd(args[1:], stdout, stderr)
	case "remove", "rm":
		return cmdMCPRemove(args[1:], stdout, stderr)
	}
	return usageError(stderr, "mcp", "unknown subcommand %q (list, add or remove)", args[0])
}

func cmdMCPList(args []string, stdout, stderr io.Writer) int {
	var asJSON, noStart bool
	var cwd string
	fs := newFlagSet("pi mcp list", mcpUsage, stdout, stderr)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	fs.BoolVar(&noStart, "no-start", false, "start no server: show the cached tools")
	fs.StringVar(&cwd, "cwd", "", "act as if run in `DIR`")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageError(stderr, "mcp list", "unexpected argument %q", pos[0])
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	entries, err := manage.ListMCPServers(ctx, manage.MCPListOptions{Scope: manage.Scope{Cwd: resolveCwd(cwd)}, NoStart: noStart, HostVersion: version})
	if err != nil {
		fmt.Fprintf(stderr, "pi mcp list: %v\n", err)
		return exitError
	}
	if asJSON {
		enc := json.NewEncoder(termtext.NewJSONWriter(stdout)) // exact text, what a terminal acts on escaped
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		enc.Encode(entries)
		return exitOK
	}
	if len(entries) == 0 {
		fmt.Fprintln(stdout, "no MCP servers configured (pi mcp add NAME -- COMMAND adds one)")
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCOPE\tSTATE\tTOOLS\tTARGET")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", e.Name, e.Scope, e.State, len(e.Tools), termtext.Cut(e.Target, 60))
	}
	tw.Flush()
	for _, e := range entries {
		if len(e.Tools) > 0 {
			fmt.Fprintf(stdout, "%s: %s\n", e.Name, strings.Join(e.Tools, ", "))
		}
		if e.Error != "" {
			fmt.Fprintf(stdout, "%s: %s\n", e.Name, e.Error)
		}
		for _, p := range e.Problems {
			fmt.Fprintf(stdout, "%s: %s\n", e.Name, p)
		}
		if e.State == "untrusted" {
			fmt.Fprintf(stdout, "%s: not started: %s is not trusted (review it, then run 'pi trust')\n", e.Name, e.File)
		}
	}
	return exitOK
}

func cmdMCPAdd(args []string, stdout, stderr io.Writer) int {
	var global, activate bool
	var cwd, url, tools string
	var env, headers stringList
	var timeoutMS int
	flagArgs, command := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		flagArgs, command = args[:i], args[i+1:]
	}
	fs := newFlagSet("pi mcp add", mcpUsage, stdout, stderr)
	fs.BoolVar(&global, "global", false, "add to $PI_HOME/pi.toml instead of the project's")
	fs.StringVar(&url, "url", "", "the server's streamable HTTP `URL` (instead of -- COMMAND)")
	fs.Var(&env, "env", "extra environment `KEY=VALUE` for a stdio server (repeatable; ${VAR} allowed)")
	fs.Var(&headers, "header", "HTTP header `NAME=VALUE` for a url server (repeatable; ${VAR} allowed)")
	fs.StringVar(&tools, "tools", "", "register only these of the server's tools, comma-separated `LIST`")
	fs.IntVar(&timeoutMS, "timeout-ms", 0, "time limit per call in `ms` (default 60000)")
	fs.BoolVar(&activate, "activate", false, "add its tools to [tools] active when pi.toml sets that list")
	fs.StringVar(&cwd, "cwd", "", "act as if run in `DIR`")
	pos, code, done := parseArgs(fs, flagArgs)
	if done {
		return code
	}
	if len(pos) != 1 {
		return usageError(stderr, "mcp add", "want one server NAME before --, got %s", plural.Count(len(pos), "argument"))
	}
	if (len(command) == 0) == (url == "") {
		return usageError(stderr, "mcp add", "give the server's command after -- (a stdio server), or --url (an HTTP server)")
	}
	s := manage.MCPServer{Name: pos[0], Command: command, URL: url, TimeoutMS: timeoutMS}
	if tools != "" {
		s.Tools = splitList(tools)
	}
	var err error
	if s.Env, err = keyValues("--env", env); err != nil {
		return usageError(stderr, "mcp add", "%v", err)
	}
	if s.Headers, err = keyValues("--header", headers); err != nil {
		return usageError(stderr, "mcp add", "%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	add, err := manage.AddMCPServer(ctx, manage.MCPAddRequest{Scope: manage.Scope{Cwd: resolveCwd(cwd), Global: global}, Server: s, Activate: activate, HostVersion: version})
	if errors.Is(err, manage.ErrMCPServerExists) {
		fmt.Fprintf(stderr, "pi mcp add: %v (pi mcp remove %s first)\n", err, s.Name)
		return exitError
	}
	if err != nil && add.TOML == "" {
		fmt.Fprintf(stderr, "pi mcp add: nothing written: %v\n", err)
		return exitError
	}
	file := add.TOML
	fmt.Fprintf(stdout, "added MCP server %s to %s\n  its tools are named mcp__%s__TOOL; 'pi mcp list' starts it and shows them\n", s.Name, file, s.Name)
	if err != nil {
		fmt.Fprintf(stderr, "pi mcp add: %v\n", err)
		return exitError
	}
	if add.Scope == manage.ScopeProject && !add.Trusted {
		fmt.Fprintf(stdout, "  note: this project's pi.toml is not trusted, so its MCP servers do not start yet; run 'pi trust' after reviewing %s.\n", file)
	}
	off := add.Off
	if len(off) == 0 && s.Tools == nil && add.ActiveAt != "" && len(add.Activated) == 0 {
		off = []string{"mcp__" + s.Name + "__*"} // its tools are known once it runs
	}
	return reportActive(stdout, stderr, "mcp add", add.Active, off, add.ListErr)
}

// reportActive says how new tools stand against [tools] active: the ones
// --activate added, or the ones the list leaves off and how to turn them
// on. It returns the exit code: an --activate that failed is an error
// (what was installed or added stays).
func reportActive(stdout, stderr io.Writer, cmd string, a manage.Active, off []string, listErr string) int {
	if len(a.Activated) > 0 {
		fmt.Fprintf(stdout, "  activated: %s (added to [tools] active in %s)\n", strings.Join(a.Activated, ", "), a.ActiveFile)
	}
	if listErr != "" {
		fmt.Fprintf(stderr, "pi %s: --activate: could not start the server to list its tools (%s); name them with --tools, or add them to [tools] active in %s by hand\n", cmd, listErr, a.ActiveAt)
		return exitError
	}
	if a.ActivateErr != nil {
		fmt.Fprintf(stderr, "pi %s: --activate: %v\n", cmd, a.ActivateErr)
		return exitError
	}
	if len(off) > 0 {
		fmt.Fprintf(stdout, "  note: [tools] active at %s leaves out the new tools (%s): they are off; add them there, or run again with --activate\n", a.ActiveAt, strings.Join(off, ", "))
	}
	return exitOK
}

// keyValues parses repeated KEY=VALUE flags.
func keyValues(flagName string, list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want KEY=VALUE", flagName, kv)
		}
		m[k] = v
	}
	return m, nil
}

func cmdMCPRemove(args []string, stdout, stderr io.Writer) int {
	var global bool
	var cwd string
	fs := newFlagSet("pi mcp remove", mcpUsage, stdout, stderr)
	fs.BoolVar(&global, "global", false, "remove from $PI_HOME/pi.toml instead of the project's")
	fs.StringVar(&cwd, "cwd", "", "act as if run in `DIR`")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) != 1 {
		return usageError(stderr, "mcp remove", "want one server NAME, got %s", plural.Count(len(pos), "argument"))
	}
	file, err := manage.RemoveMCPServer(manage.Scope{Cwd: resolveCwd(cwd), Global: global}, pos[0])
	if err != nil && file == "" {
		fmt.Fprintf(stderr, "pi mcp remove: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "removed MCP server %s from %s\n", pos[0], file)
	if err != nil {
		fmt.Fprintf(stderr, "pi mcp remove: %v\n", err)
		return exitError
	}
	return exitOK
}
