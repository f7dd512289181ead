package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/tool"
)

const toolUsage = `
Usage: pi tool call NAME 'JSON' [flags]

Runs one call of the tool NAME with the JSON arguments, through the same
pipeline the agent loop uses (prepareArguments, validation, extension hooks,
execute), in the current directory, and prints one JSON object:

  {"content":[{"type":"text","text":"..."}],"isError":false,"details":...}

Any tool that is registered can be called, active or not; an MCP tool
(mcp__SERVER__TOOL) starts its server first. Exit status: 0 when the tool
succeeded; 1 when its result is an error ("isError":true: the tool failed,
or a hook or permission rule blocked the call; the result is printed all the
same) or pi could not run it; 2 on usage errors.
Use 'pi tools list' to see the tools. The JSON may also come from a file:
'pi tool call read @args.json', or from stdin with '-'.

Examples:
  pi tool call read '{"path":"README.md","limit":20}'
  pi tool call bash '{"command":"go test ./...","timeout":600}'
  pi tool call grep '{"pattern":"TODO","glob":"*.go"}' --tools read,grep
  pi tool call mcp__fs__read_text_file '{"path":"README.md"}'
`

func cmdTool(args []string, stdout, stderr io.Writer) int {
	if code, done := groupHelp(args, toolUsage, stdout, stderr); done {
		return code
	}
	if args[0] != "call" {
		return usageError(stderr, "tool", "unknown subcommand %q (the subcommand is 'call')", args[0])
	}
	var f commonFlags
	var yes bool
	fs := newFlagSet("pi tool call", toolUsage, stdout, stderr)
	f.register(fs)
	fs.BoolVar(&yes, "yes", false, "approve what extensions or permission rules ask about (never overrides a block)")
	var ext extPending // extensions' flags, resolved once they load (extflags.go)
	pos, code, done := parseArgsDeferring(fs, args[1:], &ext)
	if done {
		if code == exitOK { // --help: the extensions' flags too
			printExtensionHelp(&f, stdout)
		}
		return code
	}
	// With flags for the extensions, the arguments are known once they
	// are loaded (a string flag takes the word after it).
	checkArgs := func(pos []string) (string, json.RawMessage, int) {
		if len(pos) != 2 {
			return "", nil, usageError(stderr, "tool call", "want a tool name and its JSON arguments, got %s", plural.Count(len(pos), "argument"))
		}
		input, err := readJSONArg(pos[1])
		if err != nil {
			return "", nil, usageError(stderr, "tool call", "%v", err)
		}
		return pos[0], input, 0
	}
	var name string
	var input json.RawMessage
	if len(ext.flags) == 0 {
		if name, input, code = checkArgs(pos); code != 0 {
			return code
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := f.appOptions(stderr, app.ModelOptions{})
	opts.Mode = app.ModeTool
	opts.ReservedFlags = ext.piFlags
	if yes {
		opts.Approver = app.YesApprover{}
	}
	// MCP servers start only when one of their tools is called.
	opts.MCPStart = app.MCPLazy
	rt, err := app.Open(ctx, opts)
	if err != nil {
		return openFailed(stderr, err, "")
	}
	defer rt.Close()
	if pos, err = resolveExtFlags(rt, &ext, pos); err != nil {
		return usageError(stderr, "tool call", "%v", err)
	}
	if len(ext.flags) > 0 {
		if name, input, code = checkArgs(pos); code != 0 {
			return code
		}
	}
	res, err := rt.CallTool(ctx, name, "call_1", input, nil)
	if errors.Is(err, app.ErrUnknownTool) {
		fmt.Fprintf(stderr, "pi tool call: unknown tool %q\nKnown tools: %s\n", name, strings.Join(rt.ToolNames(), ", "))
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "pi: %v\n", err)
		return exitError
	}
	enc := json.NewEncoder(termtext.NewJSONWriter(stdout)) // exact text, what a terminal acts on escaped
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		fmt.Fprintf(stderr, "pi: encode result: %v\n", err)
		return exitError
	}
	if res.IsError {
		return exitError
	}
	return exitOK
}

// readJSONArg reads the JSON arguments: inline, @FILE, or - for stdin.
func readJSONArg(s string) (json.RawMessage, error) {
	data := []byte(s)
	switch {
	case s == "-":
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return nil, fmt.Errorf("read arguments from stdin: %w", err)
		}
		data = b
	case strings.HasPrefix(s, "@"):
		b, err := os.ReadFile(s[1:])
		if err != nil {
			return nil, fmt.Errorf("read arguments: %w", err)
		}
		data = b
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, fmt.Errorf("arguments are not valid JSON (%v): %s", err, termtext.Cut(string(data), 200))
	}
	return json.RawMessage(data), nil
}

const toolsUsage = `
Usage: pi tools list [--json] [flags]

Lists every registered tool: built-in ones, those of loaded extensions and
those of MCP servers (which it starts: listing their tools needs them), with
its source and whether it is active (sent to the model). The active set
comes from --tools, else [tools] active in pi.toml, else read, bash, edit,
write, every extension tool and every MCP tool.

--json prints an array of
  {"name","label","description","promptSnippet","source":{"kind":"builtin"|"extension"|"mcp",...},"active":bool}
`

type toolListEntry struct {
	Name          string      `json:"name"`
	Label         string      `json:"label"`
	Description   string      `json:"description"`
	PromptSnippet string      `json:"promptSnippet"`
	Source        tool.Source `json:"source"`
	Active        bool        `json:"active"`
}

func cmdTools(args []string, stdout, stderr io.Writer) int {
	if code, done := groupHelp(args, toolsUsage, stdout, stderr); done {
		return code
	}
	if args[0] != "list" {
		return usageError(stderr, "tools", "unknown subcommand %q (the subcommand is 'list')", args[0])
	}
	var f commonFlags
	var asJSON bool
	fs := newFlagSet("pi tools list", toolsUsage, stdout, stderr)
	f.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	pos, code, done := parseArgs(fs, args[1:])
	if done {
		return code
	}
	if len(pos) != 0 {
		return usageError(stderr, "tools list", "unexpected argument %q", pos[0])
	}
	listOpts := f.appOptions(stderr, app.ModelOptions{})
	listOpts.Mode = app.ModeInspect
	// Listing an MCP server's tools needs the server.
	listOpts.MCPStart = app.MCPWait
	rt, err := app.Open(context.Background(), listOpts)
	if err != nil {
		return openFailed(stderr, err, "")
	}
	defer rt.Close()
	reg := rt.Registry()
	entries := []toolListEntry{}
	for _, d := range reg.Definitions() {
		entries = append(entries, toolListEntry{d.Name, d.Label, d.Description, d.PromptSnippet, d.Source, reg.IsActive(d.Name)})
	}
	if asJSON {
		enc := json.NewEncoder(termtext.NewJSONWriter(stdout)) // exact text, what a terminal acts on escaped
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(entries); err != nil {
			return exitError
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tACTIVE\tSOURCE\tSUMMARY")
	for _, e := range entries {
		active := "no"
		if e.Active {
			active = "yes"
		}
		summary := e.PromptSnippet
		if summary == "" {
			summary = firstLine(e.Description)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Name, active, e.Source, termtext.Cut(summary, 80))
	}
	tw.Flush()
	return exitOK
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
