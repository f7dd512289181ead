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
	"github.com/pi-go/pi/runtime/manage"
)

const extUsage = `
Usage:
  pi ext install FILE.wasm [--global] [--grant KIND=VALUE ...] [--override]
                 [--activate] [--ext-config KEY=VALUE ...] [--ext-config-file FILE.toml]
  pi ext update NAME [FILE.wasm] [--global]
  pi ext list [--json]
  pi ext remove NAME [--global]
  pi ext new NAME --lang go|c|rust|wat [--dir DIR]
  pi ext dev DIR [--global] [--watch]

install checks the module (the pi_abi_v1 marker, its imports, and its init in
an empty sandbox), copies it to .pi/extensions/NAME.wasm in the project (the
folder of the project's pi.toml, else the project root: the nearest folder
with .git or .pi/, else the current one) or, with --global, to
$PI_HOME/extensions/NAME.wasm, and appends its [[extensions]] block with the
file's sha256 to that pi.toml, keeping the rest of the file as it was. If any
step fails nothing is written. A tool named like a built-in tool or like a
tool of an installed extension is refused (every run would fail to
register it) unless --override lets it replace that tool.

When a pi.toml sets [tools] active, only the tools it lists are active, so
the new tools are off: install says so, and --activate adds them to that
list (keeping the project's trust). A name left in the list after its
extension is removed is only a warning at start.

Grants are deny-by-default; give them with --grant, repeatable:
  --grant fs=ro:.          read-only access to the project folder
  --grant fs=rw:build      read-write access to build/
  --grant exec='git status*'
                           may run "git status" with any arguments, in a
                           directory inside its fs grants (a bare name such
                           as exec=git allows any arguments; install warns
                           about commands that can run arbitrary code)
  --grant env=HOME         may read the HOME environment variable
  --grant http='https://api.example.com/v1/*'
                           may fetch URLs that match (http.request; scheme,
                           host and port exact, a trailing * matches any
                           rest of the path; every redirect is checked too)
  --grant tool=read        may run the tool read through tool.call (the
                           whole pipeline: hooks and permission rules run)
  --grant llm=true         may call the model with llm.complete, within
                           [extensions.limits] llm_tokens (default 200000)
  --grant model=true       may change the model and thinking level, and
                           replace the body of requests to the provider

Config: --ext-config KEY=VALUE sets one key of the entry's
[extensions.config] (repeatable; VALUE is a TOML value: n=3, on=true,
'greeting="hi"' (quote the TOML quotes for the shell), 'paths=[".env"]');
--ext-config-file FILE.toml gives a whole table, which --ext-config keys
then override. The module's init is run with that config at install, so a
config it refuses is refused before anything is written.

update replaces an installed module after a rebuild without losing
anything: it checks FILE.wasm in the sandbox (with the entry's config; its
init must declare the same NAME), copies it over the installed module and
rewrites only the sha256 in pi.toml. Grants, limits, override and
[extensions.config] stay, every other byte of pi.toml stays, and a trusted
project stays trusted (an untrusted one stays untrusted). Without FILE it
pins the module already at the entry's path (rebuilt in place, or replaced
by hand: review it first). A module that is refused writes nothing.

new writes a ready project for an extension named NAME in DIR (default
./NAME): source with one tool and one hook, build.sh, README.md and a test.
Go needs only the Go toolchain (pi writes its SDK into the project, so it
builds offline); C needs clang, lld and wasi-libc; Rust needs rustc with the
wasm32-wasi standard library (Debian: libstd-rust-dev-wasm32); wat needs
wat2wasm (wabt). docs/extensions.md has the install line of each.

dev rebuilds the extension project in DIR with its build.sh, checks the
module, and then updates the installed extension of that name (as update
does), or, when it is not installed yet, leaves DIR/NAME.wasm and prints
the install command. --watch does it again whenever a file in DIR changes
(polling once a second) until interrupted; each later pi run loads the new
build.

list shows every configured extension (global and project): name, version,
tools, hooks, slash commands, grants, sha256 and scope (--json: all of it,
with each problem). remove deletes an extension's block
from pi.toml and its copied .wasm file. Every edit keeps the project's
trust as it was (a trusted project stays trusted, an untrusted one
untrusted).
`

func cmdExt(args []string, stdout, stderr io.Writer) int {
	if code, done := groupHelp(args, extUsage, stdout, stderr); done {
		return code
	}
	switch args[0] {
	case "install":
		return cmdExtInstall(args[1:], stdout, stderr)
	case "list":
		return cmdExtList(args[1:], stdout, stderr)
	case "remove", "rm", "uninstall":
		return cmdExtRemove(args[1:], stdout, stderr)
	case "update":
		return cmdExtUpdate(args[1:], stdout, stderr)
	case "new":
		return cmdExtNew(args[1:], stdout, stderr)
	case "dev":
		return cmdExtDev(args[1:], stdout, stderr)
	}
	return usageError(stderr, "ext", "unknown subcommand %q (install, update, list, remove, new or dev)", args[0])
}

func cmdExtInstall(args []string, stdout, stderr io.Writer) int {
	var global, override, activate bool
	var cwd, configFile string
	var grants, extConfig stringList
	var memoryMB, timeoutMS int
	fs := newFlagSet("pi ext install", extUsage, stdout, stderr)
	fs.Var(&extConfig, "ext-config", "set `KEY=VALUE` in the extension's [extensions.config] (VALUE in TOML); repeatable")
	fs.StringVar(&configFile, "ext-config-file", "", "the extension's [extensions.config] from the TOML table in `FILE`")
	fs.BoolVar(&global, "global", false, "install into $PI_HOME instead of the project")
	fs.BoolVar(&override, "override", false, "let its tools replace built-in tools (and installed extensions' tools) of the same name")
	fs.BoolVar(&activate, "activate", false, "add its tools to [tools] active when pi.toml sets that list")
	fs.Var(&grants, "grant", "grant `KIND=VALUE` ("+grantKinds+"); repeatable")
	fs.IntVar(&memoryMB, "memory-mb", 0, "memory limit in `MiB` (default 64)")
	fs.IntVar(&timeoutMS, "timeout-ms", 0, "time limit per tool call in `ms` (default 30000)")
	fs.StringVar(&cwd, "cwd", "", "act as if run in `DIR`")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) != 1 {
		return usageError(stderr, "ext install", "want one FILE.wasm, got %s", plural.Count(len(pos), "argument"))
	}
	var g manage.Grants
	for _, kv := range grants {
		if err := g.AddFlag(kv); err != nil {
			return usageError(stderr, "ext install", "--grant %s: %v", kv, err)
		}
	}
	limits := manage.Limits{MemoryMB: memoryMB, TimeoutMS: timeoutMS}
	if err := limits.Check(); err != nil {
		return usageError(stderr, "ext install", "--memory-mb/--timeout-ms: %v", err)
	}
	extCfg, err := manage.ParseExtensionConfig(configFile, extConfig)
	if err != nil {
		return usageError(stderr, "ext install", "%v", err)
	}
	inst, err := manage.Install(context.Background(), manage.InstallRequest{
		Scope:  manage.Scope{Cwd: resolveCwd(cwd), Global: global},
		Source: pos[0], Override: override, Activate: activate, Grants: g,
		Limits: limits, Config: extCfg,
		LogOutput: stderr, HostVersion: version,
		CompileProgress: compileProgress(stderr),
	})
	if err != nil && inst.Dest == "" {
		fmt.Fprintf(stderr, "pi ext install: %s refused, nothing written: %v\n", pos[0], err)
		if errors.Is(err, manage.ErrExtensionExists) {
			fmt.Fprintf(stderr, "pi ext install: to replace it keeping its grants and config: pi ext update NAME %s\n", pos[0])
		}
		return exitError
	}
	info := inst.Info
	fmt.Fprintf(stdout, "installed %s %s (%s) to %s\n  pi.toml: %s\n  sha256: %s\n", info.Name, info.Version, inst.Scope, inst.Dest, inst.TOML, inst.SHA256)
	if err != nil {
		fmt.Fprintf(stderr, "pi ext install: %v\n", err)
		return exitError
	}
	if len(info.Tools) > 0 {
		var names []string
		for _, tl := range info.Tools {
			names = append(names, tl.Name)
		}
		fmt.Fprintf(stdout, "  tools: %s\n", strings.Join(names, ", "))
	}
	if len(info.Hooks) > 0 {
		fmt.Fprintf(stdout, "  hooks: %s\n", strings.Join(info.Hooks, ", "))
	}
	fmt.Fprintf(stdout, "  grants: %s\n", describeGrants(g))
	if len(extCfg) > 0 {
		fmt.Fprintf(stdout, "  config: %s\n", describeConfig(extCfg))
	}
	for _, why := range inst.RunsCode {
		fmt.Fprintf(stderr, "pi ext install: warning: %s. An extension that can run code outside its sandbox can do anything you can.\n", why)
	}
	if len(g.Exec) > 0 && len(g.FS) == 0 {
		fmt.Fprintf(stdout, "  note: exec runs only in a directory inside the fs grants, and it has none; add --grant fs=ro:. to let it run in the project.\n")
	}
	for _, n := range inst.Notes {
		fmt.Fprintf(stdout, "  note: %s\n", n)
	}
	if len(info.Commands) > 0 {
		var names []string
		for _, c := range info.Commands {
			names = append(names, "/"+c.Name)
		}
		fmt.Fprintf(stdout, "  commands: %s\n", strings.Join(names, ", "))
	}
	if len(inst.Missing) > 0 {
		fmt.Fprintf(stdout, "  note: it asks for %s, which you did not grant; reinstall with --grant to give it.\n", strings.Join(inst.Missing, " "))
	}
	if inst.Scope == manage.ScopeProject && !inst.Trusted {
		fmt.Fprintf(stdout, "  note: this project's pi.toml is not trusted, so its extensions do not load yet; run 'pi trust' after reviewing %s.\n", inst.TOML)
	}
	return reportActive(stdout, stderr, "ext install", inst.Active, inst.Off, "")
}

func describeGrants(g manage.Grants) string {
	var parts []string
	for _, v := range g.FS {
		parts = append(parts, "fs="+v)
	}
	for _, v := range g.Exec {
		parts = append(parts, "exec="+v)
	}
	for _, v := range g.Env {
		parts = append(parts, "env="+v)
	}
	for _, v := range g.HTTP {
		parts = append(parts, "http="+v)
	}
	for _, v := range g.Tools {
		parts = append(parts, "tool="+v)
	}
	if g.LLM {
		parts = append(parts, "llm=true")
	}
	if g.Model {
		parts = append(parts, "model=true")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

func cmdExtList(args []string, stdout, stderr io.Writer) int {
	var asJSON bool
	var cwd string
	fs := newFlagSet("pi ext list", extUsage, stdout, stderr)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	fs.StringVar(&cwd, "cwd", "", "act as if run in `DIR`")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageError(stderr, "ext list", "unexpected argument %q", pos[0])
	}
	entries, err := manage.ListExtensions(context.Background(), manage.Scope{Cwd: resolveCwd(cwd)})
	if err != nil {
		fmt.Fprintf(stderr, "pi ext list: %v\n", err)
		return exitError
	}
	if asJSON {
		enc := json.NewEncoder(termtext.NewJSONWriter(stdout)) // exact text, what a terminal acts on escaped
		enc.SetIndent("", "  ")
		if entries == nil {
			entries = []manage.ConfiguredExtension{}
		}
		enc.Encode(entries)
		return exitOK
	}
	if len(entries) == 0 {
		fmt.Fprintln(stdout, "no extensions configured (pi ext install FILE.wasm adds one)")
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tSCOPE\tTOOLS\tHOOKS\tCOMMANDS\tGRANTS\tSHA256")
	for _, e := range entries {
		scope := e.Scope
		if !e.Trusted {
			scope += " (untrusted: not loaded)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, e.Version, scope, strings.Join(e.Tools, ","), strings.Join(e.Hooks, ","),
			slashed(e.Commands), describeGrants(e.Grants), e.SHA256[:min(12, len(e.SHA256))])
	}
	tw.Flush()
	for _, e := range entries {
		if e.Problem != "" {
			fmt.Fprintf(stdout, "%s: %s\n", e.Name, e.Problem)
		}
	}
	return exitOK
}

func cmdExtRemove(args []string, stdout, stderr io.Writer) int {
	var global bool
	var cwd string
	fs := newFlagSet("pi ext remove", extUsage, stdout, stderr)
	fs.BoolVar(&global, "global", false, "remove from $PI_HOME/pi.toml instead of the project's")
	fs.StringVar(&cwd, "cwd", "", "act as if run in `DIR`")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) != 1 {
		return usageError(stderr, "ext remove", "want one extension NAME, got %s", plural.Count(len(pos), "argument"))
	}
	rm, err := manage.Remove(manage.Scope{Cwd: resolveCwd(cwd), Global: global}, pos[0])
	if err != nil && rm.TOML == "" {
		fmt.Fprintf(stderr, "pi ext remove: %v\n", err)
		return exitError
	}
	if rm.Deleted != "" {
		fmt.Fprintf(stdout, "removed %s from %s and deleted %s\n", pos[0], rm.TOML, rm.Deleted)
	} else {
		fmt.Fprintf(stdout, "removed %s from %s\n", pos[0], rm.TOML)
	}
	for _, p := range rm.Tidied {
		fmt.Fprintf(stdout, "  deleted %s (nothing left in it)\n", p)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pi ext remove: %v\n", err)
		return exitError
	}
	return exitOK
}

// describeConfig shows a config table on one line, as JSON.
func describeConfig(cfg map[string]any) string {
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Sprint(cfg)
	}
	return string(b)
}

func cmdExtUpdate(args []string, stdout, stderr io.Writer) int {
	var global bool
	var cwd string
	fs := newFlagSet("pi ext update", extUsage, stdout, stderr)
	fs.BoolVar(&global, "global", false, "update the extension of $PI_HOME/pi.toml instead of the project's")
	fs.StringVar(&cwd, "cwd", "", "act as if run in `DIR`")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageError(stderr, "ext update", "want NAME and optionally FILE.wasm, got %s", plural.Count(len(pos), "argument"))
	}
	req := manage.UpdateRequest{
		Scope: manage.Scope{Cwd: resolveCwd(cwd), Global: global},
		Name:  pos[0], LogOutput: stderr, HostVersion: version,
		CompileProgress: compileProgress(stderr),
	}
	if len(pos) == 2 {
		req.Source = pos[1]
	}
	up, err := manage.Update(context.Background(), req)
	if err != nil && up.TOML == "" {
		fmt.Fprintf(stderr, "pi ext update: %s refused, nothing written: %v\n", pos[0], err)
		return exitError
	}
	printUpdated(stdout, up)
	if err != nil {
		fmt.Fprintf(stderr, "pi ext update: %v\n", err)
		return exitError
	}
	return exitOK
}

// printUpdated says what an update did.
func printUpdated(stdout io.Writer, up manage.Updated) {
	switch {
	case up.OldSHA256 == up.SHA256 && !up.Copied:
		fmt.Fprintf(stdout, "%s %s is up to date (%s)\n  sha256: %s\n", up.Info.Name, up.Info.Version, up.Path, up.SHA256)
	default:
		fmt.Fprintf(stdout, "updated %s %s (%s) at %s\n  pi.toml: %s\n  sha256: %s (was %s)\n", up.Info.Name, up.Info.Version, up.Scope, up.Path, up.TOML, up.SHA256, up.OldSHA256)
	}
	var tools []string
	for _, t := range up.Info.Tools {
		tools = append(tools, t.Name)
	}
	if len(tools) > 0 {
		fmt.Fprintf(stdout, "  tools: %s\n", strings.Join(tools, ", "))
	}
	if len(up.Info.Hooks) > 0 {
		fmt.Fprintf(stdout, "  hooks: %s\n", strings.Join(up.Info.Hooks, ", "))
	}
	fmt.Fprintf(stdout, "  kept: grants, limits and config of its pi.toml entry\n")
	if len(up.Missing) > 0 {
		fmt.Fprintf(stdout, "  note: it asks for %s, which its entry does not grant; add it under [extensions.grants] in %s.\n", strings.Join(up.Missing, " "), up.TOML)
	}
	if up.Scope == manage.ScopeProject && !up.Trusted {
		fmt.Fprintf(stdout, "  note: this project's pi.toml is not trusted, so its extensions do not load yet; run 'pi trust' after reviewing %s.\n", up.TOML)
	}
}

// slashed writes command names as "/a,/b".
func slashed(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "/" + n
	}
	return strings.Join(out, ",")
}
