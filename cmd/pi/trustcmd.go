package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/pi-go/pi/runtime/manage"
)

const trustUsage = `
Usage: pi trust [--cwd DIR]
       pi untrust [--cwd DIR]

A project's pi.toml can make pi run code: [tools.bash] command_prefix and
shell, and [[extensions]] with their grants. Until you trust the project, pi
ignores those settings (with one warning saying what it ignored); the model
and tool selection still apply.

'pi trust' records the project's folder, the sha256 of its pi.toml and the
real folder each fs grant of its extensions points to in $PI_HOME/trust.json,
and lists what its extensions may fetch (http grants) and which tools they
may call (tools grants).
When the pi.toml changes, or a grant's folder now resolves somewhere else
(say, it was replaced by a symlink), pi asks for trust again.
'pi untrust' forgets the project. For one run, use --trust or PI_TRUST=1.

The project's pi.toml is the nearest one from the current folder up to the
project root (the nearest folder with .git or .pi/, never above $HOME);
without a project root, only the current folder's.
`

func cmdTrust(args []string, stdout, stderr io.Writer, trust bool) int {
	name := "trust"
	if !trust {
		name = "untrust"
	}
	var cwd string
	fs := newFlagSet("pi "+name, trustUsage, stdout, stderr)
	fs.StringVar(&cwd, "cwd", "", "the project `DIR` (default: the current folder)")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageError(stderr, name, "unexpected argument %q", pos[0])
	}
	scope := manage.Scope{Cwd: resolveCwd(cwd)}
	if !trust {
		dir, err := manage.Untrust(scope)
		if err != nil {
			fmt.Fprintf(stderr, "pi untrust: %v\n", err)
			return exitError
		}
		if dir == "" {
			return nothingToTrust(stderr, name, scope.Cwd)
		}
		fmt.Fprintf(stdout, "untrusted %s: its command_prefix, shell and extensions are ignored from now on\n", dir)
		return exitOK
	}
	tr, err := manage.Trust(scope)
	if err != nil {
		fmt.Fprintf(stderr, "pi trust: %v\n", err)
		return exitError
	}
	if tr.File == "" {
		return nothingToTrust(stderr, name, scope.Cwd)
	}
	fmt.Fprintf(stdout, "trusted %s: its command_prefix, shell and extensions apply until the file or a repository program it runs changes\n", tr.File)
	for _, g := range tr.Grants {
		if g.Problem == "" {
			fmt.Fprintf(stdout, "  extension %s: fs grant %s is %s\n", g.Extension, g.Grant, g.Real)
		} else {
			fmt.Fprintf(stdout, "  extension %s: fs grant %s is refused (%s); the extension will not load while it is, and when that changes the project needs 'pi trust' again\n", g.Extension, g.Grant, g.Problem)
		}
	}
	for _, p := range tr.Programs {
		fmt.Fprintf(stdout, "  %s runs %s (sha256 %s); a change to it needs 'pi trust' again\n", p.Setting, p.Path, shortSHA(p.SHA256))
	}
	// What its extensions may fetch and which tools they may call (ABI
	// 1.1), next to the fs grants.
	for _, e := range tr.Extensions {
		if len(e.Grants.HTTP) > 0 {
			fmt.Fprintf(stdout, "  extension %s: may fetch %s\n", e.Name, strings.Join(e.Grants.HTTP, ", "))
		}
		if len(e.Grants.Tools) > 0 {
			fmt.Fprintf(stdout, "  extension %s: may call the tools %s\n", e.Name, strings.Join(e.Grants.Tools, ", "))
		}
	}
	return exitOK
}

// nothingToTrust says there is no project pi.toml in cwd.
func nothingToTrust(stderr io.Writer, name, cwd string) int {
	fmt.Fprintf(stderr, "pi %s: no pi.toml in %s or its parents up to the project root (the nearest folder with .git or .pi/): there is nothing to %s\n", name, cwd, name)
	return exitError
}

// shortSHA is the first 12 hex digits of a digest, as people compare them.
func shortSHA(sum string) string {
	if sum == "" {
		return "unreadable"
	}
	return sum[:min(12, len(sum))]
}
