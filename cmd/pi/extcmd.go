package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/execgrant"
	"github.com/pi-go/pi/runtime/extspec"
)

const extUsage = `
Usage:
  pi ext install FILE.wasm [--global] [--grant KIND=VALUE ...] [--override]
  pi ext list [--json]
  pi ext remove NAME [--global]

install checks the module (the pi_abi_v1 marker, its imports, and its init in
an empty sandbox), copies it to .pi/extensions/NAME.wasm in the project (the
folder of the project's pi.toml, else the project root: the nearest folder
with .git or .pi/, else the current one) or, with --global, to
$PI_HOME/extensions/NAME.wasm, and appends its [[extensions]] block with the
file's sha256 to that pi.toml, keeping the rest of the file as it was. If any
step fails nothing is written.

Grants are deny-by-default; give them with --grant, repeatable:
  --grant fs=ro:.          read-only access to the project folder
  --grant fs=rw:build      read-write access to build/
  --grant exec='git status*'
                           may run "git status" with any arguments, in a
                           directory inside its fs grants (a bare name such
                           as exec=git allows any arguments; install warns
                           about commands that can run arbitrary code)
  --grant env=HOME         may read the HOME environment variable

list shows every configured extension (global and project): name, version,
tools, hooks, grants, sha256 and scope. remove deletes an extension's block
from pi.toml and its copied .wasm file.
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
	}
	return usageError(stderr, "ext", "unknown subcommand %q (install, list or remove)", args[0])
}

func cmdExtInstall(args []string, stdout, stderr io.Writer) int {
	var global, override bool
	var cwd string
	var grants stringList
	var memoryMB, timeoutMS int
	fs := newFlagSet("pi ext install", extUsage, stdout, stderr)
	fs.BoolVar(&global, "global", false, "install into $PI_HOME instead of the project")
	fs.BoolVar(&override, "override", false, "let its tools replace built-in tools of the same name")
	fs.Var(&grants, "grant", "grant `KIND=VALUE` (fs=ro:PATH, fs=rw:PATH, exec=CMD, env=NAME); repeatable")
	fs.IntVar(&memoryMB, "memory-mb", 0, "memory limit in `MiB` (default 64)")
	fs.IntVar(&timeoutMS, "timeout-ms", 0, "time limit per tool call in `ms` (default 30000)")
	fs.StringVar(&cwd, "cwd", "", "act as if run in `DIR`")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) != 1 {
		return usageError(stderr, "ext install", "want one FILE.wasm, got %d argument(s)", len(pos))
	}
	var g extspec.Grants
	for _, kv := range grants {
		if err := g.AddFlag(kv); err != nil {
			return usageError(stderr, "ext install", "--grant %s: %v", kv, err)
		}
	}
	limits := extspec.Limits{MemoryMB: memoryMB, TimeoutMS: timeoutMS}
	if err := limits.Check(); err != nil {
		return usageError(stderr, "ext install", "--memory-mb/--timeout-ms: %v", err)
	}
	inst, err := app.InstallExtension(context.Background(), app.InstallRequest{
		ExtensionScope: app.ExtensionScope{Cwd: resolveCwd(cwd), Global: global},
		Source:         pos[0], Override: override, Grants: g,
		Limits:    limits,
		LogOutput: stderr, HostVersion: version,
	})
	if err != nil && inst.Dest == "" {
		fmt.Fprintf(stderr, "pi ext install: %s refused, nothing written: %v\n", pos[0], err)
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
	for _, pat := range g.Exec {
		if why := execgrant.RunsCode(pat); why != "" {
			fmt.Fprintf(stderr, "pi ext install: warning: %s. An extension that can run code outside its sandbox can do anything you can.\n", why)
		}
	}
	if len(g.Exec) > 0 && len(g.FS) == 0 {
		fmt.Fprintf(stdout, "  note: exec runs only in a directory inside the fs grants, and it has none; add --grant fs=ro:. to let it run in the project.\n")
	}
	if len(inst.Missing) > 0 {
		fmt.Fprintf(stdout, "  note: it asks for %s, which you did not grant; reinstall with --grant to give it.\n", strings.Join(inst.Missing, " "))
	}
	if inst.Scope == config.ScopeProject && !inst.Trusted {
		fmt.Fprintf(stdout, "  note: this project's pi.toml is not trusted, so its extensions do not load yet; run 'pi trust' after reviewing %s.\n", inst.TOML)
	}
	return exitOK
}

func describeGrants(g config.Grants) string {
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
	entries, err := app.ListExtensions(context.Background(), app.ExtensionScope{Cwd: resolveCwd(cwd)})
	if err != nil {
		fmt.Fprintf(stderr, "pi ext list: %v\n", err)
		return exitError
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(entries)
		return exitOK
	}
	if len(entries) == 0 {
		fmt.Fprintln(stdout, "no extensions configured (pi ext install FILE.wasm adds one)")
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tSCOPE\tTOOLS\tHOOKS\tGRANTS\tSHA256")
	for _, e := range entries {
		scope := e.Scope
		if !e.Trusted {
			scope += " (untrusted: not loaded)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, e.Version, scope, strings.Join(e.Tools, ","), strings.Join(e.Hooks, ","),
			describeGrants(e.Grants), e.SHA256[:min(12, len(e.SHA256))])
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
		return usageError(stderr, "ext remove", "want one extension NAME, got %d argument(s)", len(pos))
	}
	rm, err := app.RemoveExtension(app.ExtensionScope{Cwd: resolveCwd(cwd), Global: global}, pos[0])
	if err != nil && rm.TOML == "" {
		fmt.Fprintf(stderr, "pi ext remove: %v\n", err)
		return exitError
	}
	if rm.Deleted != "" {
		fmt.Fprintf(stdout, "removed %s from %s and deleted %s\n", pos[0], rm.TOML, rm.Deleted)
	} else {
		fmt.Fprintf(stdout, "removed %s from %s\n", pos[0], rm.TOML)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pi ext remove: %v\n", err)
		return exitError
	}
	return exitOK
}
