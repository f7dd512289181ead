package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/app"
)

const permissionsUsage = `
Usage: pi permissions check TOOL 'JSON' [--json] [flags]
       pi permissions list [--json] [flags]

'check' says what the [permissions] rules of pi.toml decide about one call
of TOOL with the JSON arguments (inline, @FILE or - for stdin), as the agent
loop would decide it, without running it: the decision (allow, ask or
deny), the rule that decided (FILE:LINE and the rule in short) and why,
and for bash every simple command found in the script with its own
decision. Extension hooks are not run (a hook may still rewrite or block
the call).

'list' prints the default and every rule in the order they apply (the
global pi.toml's, then the project's), with the allow rules of an untrusted
project marked as ignored.

Examples:
  pi permissions check bash '{"command":"cd x && git push --force"}'
  pi permissions check write '{"path":".env","content":""}'
  pi permissions list

See docs/permissions.md for the rules and recipes.
`

func cmdPermissions(args []string, stdout, stderr io.Writer) int {
	if code, done := groupHelp(args, permissionsUsage, stdout, stderr); done {
		return code
	}
	sub := args[0]
	if sub != "check" && sub != "list" {
		return usageError(stderr, "permissions", "unknown subcommand %q (the subcommands are 'check' and 'list')", sub)
	}
	var f commonFlags
	var asJSON bool
	fs := newFlagSet("pi permissions "+sub, permissionsUsage, stdout, stderr)
	f.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	pos, code, done := parseArgs(fs, args[1:])
	if done {
		return code
	}
	want := 0
	if sub == "check" {
		want = 2
	}
	if len(pos) != want {
		return usageError(stderr, "permissions "+sub, "want %s, got %d", plural.Count(want, "argument"), len(pos))
	}
	var input json.RawMessage
	if sub == "check" {
		var err error
		if input, err = readJSONArg(pos[1]); err != nil {
			return usageError(stderr, "permissions check", "%v", err)
		}
	}
	rt, err := app.Open(context.Background(), f.appOptions(stderr, app.ModelOptions{}))
	if err != nil {
		fmt.Fprintf(stderr, "pi: %v\n", err)
		return exitError
	}
	defer rt.Close()
	if sub == "list" {
		return permissionsList(rt, asJSON, stdout)
	}
	res, err := rt.CheckPermission(pos[0], input)
	if errors.Is(err, app.ErrUnknownTool) {
		fmt.Fprintf(stderr, "pi permissions check: unknown tool %q\nKnown tools: %s\n", pos[0], strings.Join(rt.ToolNames(), ", "))
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "pi: %v\n", err)
		return exitError
	}
	if asJSON {
		return printJSON(stdout, res)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "decision:\t%s\n", res.Decision)
	if res.RuleText != "" {
		fmt.Fprintf(tw, "rule:\t%s\n", res.RuleText)
	}
	if res.Reason != "" {
		fmt.Fprintf(tw, "reason:\t%s\n", res.Reason)
	}
	if res.SandboxOff {
		fmt.Fprintf(tw, "sandbox:\toff (every command is covered by a rule with sandbox = \"off\")\n")
	}
	tw.Flush()
	if len(res.Commands) > 0 {
		fmt.Fprintln(stdout, "commands:")
		tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, c := range res.Commands {
			d := string(c.Decision)
			if d == "" {
				d = "-"
			}
			what := describeRule(c.RuleText, c.Reason)
			var notes []string
			if c.Via != "" {
				notes = append(notes, "via "+c.Via)
			}
			if c.Latent {
				notes = append(notes, "quoted text: deny and ask rules only")
			}
			if len(notes) > 0 {
				what += " [" + strings.Join(notes, "; ") + "]"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", d, c.Text, what)
		}
		tw.Flush()
	}
	return exitOK
}

func describeRule(rule, reason string) string {
	switch {
	case rule != "" && reason != "":
		return rule + " (" + reason + ")"
	case rule != "":
		return rule
	}
	return reason
}

type permissionListEntry struct {
	Where    string            `json:"where"`
	Scope    string            `json:"scope"`
	Tool     string            `json:"tool"`
	Command  []string          `json:"command,omitempty"`
	Path     []string          `json:"path,omitempty"`
	Args     map[string]string `json:"args,omitempty"`
	Decision string            `json:"decision"`
	Reason   string            `json:"reason,omitempty"`
	Sandbox  string            `json:"sandbox,omitempty"`
	Ignored  string            `json:"ignored,omitempty"`
}

func permissionsList(rt *app.Runtime, asJSON bool, stdout io.Writer) int {
	info := rt.Permissions()
	if asJSON {
		out := struct {
			Default          app.Decision          `json:"default"`
			DefaultAt        string                `json:"defaultAt,omitempty"`
			IgnoredDefault   app.Decision          `json:"ignoredDefault,omitempty"`
			IgnoredDefaultAt string                `json:"ignoredDefaultAt,omitempty"`
			Rules            []permissionListEntry `json:"rules"`
		}{info.Default, info.DefaultAt, info.IgnoredDefault, info.IgnoredDefaultAt, []permissionListEntry{}}
		for _, r := range info.Rules {
			out.Rules = append(out.Rules, permissionListEntry{r.Where, r.Scope, r.Tool, r.Command, r.Path, r.Args, string(r.Decision), r.Reason, r.Sandbox, r.Ignored})
		}
		return printJSON(stdout, out)
	}
	where := "pi's default"
	if info.DefaultAt != "" {
		where = info.DefaultAt
	}
	if len(info.Rules) == 0 && info.DefaultAt == "" && info.IgnoredDefault == "" {
		fmt.Fprintln(stdout, "no [permissions] in pi.toml: every call is allowed (see docs/permissions.md)")
		return exitOK
	}
	fmt.Fprintf(stdout, "default: %s (%s)\n", info.Default, where)
	if info.IgnoredDefault != "" {
		fmt.Fprintf(stdout, "ignored: default %s (%s): the project is not trusted (pi trust)\n", info.IgnoredDefault, info.IgnoredDefaultAt)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHERE\tDECISION\tRULE\tREASON")
	for _, r := range info.Rules {
		reason := r.Reason
		if r.Ignored != "" {
			reason = "ignored: " + r.Ignored
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Where, r.Decision, r.Short(), reason)
	}
	tw.Flush()
	return exitOK
}

func printJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(termtext.NewJSONWriter(w)) // exact text, what a terminal acts on escaped
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return exitError
	}
	return exitOK
}
