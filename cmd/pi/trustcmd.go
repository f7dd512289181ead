package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/pi-go/pi/runtime/config"
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
	cwd = resolveCwd(cwd)
	home := config.DefaultPIHome()
	var file string
	var err error
	if trust {
		file, err = projectFile(cwd)
	} else {
		// Untrusting needs no parse: it works on a file that is broken.
		file, err = config.FindProjectFile(cwd, home)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pi %s: %v\n", name, err)
		return exitError
	}
	if file == "" {
		fmt.Fprintf(stderr, "pi %s: no pi.toml in %s or its parents up to the project root (the nearest folder with .git or .pi/): there is nothing to %s\n", name, cwd, name)
		return exitError
	}
	if !trust {
		if err := config.Untrust(home, filepath.Dir(file)); err != nil {
			fmt.Fprintf(stderr, "pi untrust: %v\n", err)
			return exitError
		}
		fmt.Fprintf(stdout, "untrusted %s: its command_prefix, shell and extensions are ignored from now on\n", filepath.Dir(file))
		return exitOK
	}
	if err := config.Trust(home, file); err != nil {
		fmt.Fprintf(stderr, "pi trust: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "trusted %s: its command_prefix, shell and extensions apply until the file changes\n", file)
	grants, err := config.TrustGrants(home, file)
	if err != nil {
		fmt.Fprintf(stderr, "pi trust: %v\n", err)
		return exitError
	}
	for _, g := range grants {
		if g.Problem == "" {
			fmt.Fprintf(stdout, "  extension %s: fs grant %s is %s\n", g.Extension, g.Grant, g.Real)
		} else {
			fmt.Fprintf(stdout, "  extension %s: fs grant %s is refused (%s); the extension will not load while it is, and when that changes the project needs 'pi trust' again\n", g.Extension, g.Grant, g.Problem)
		}
	}
	printNetworkAndToolGrants(stdout, filepath.Dir(file))
	return exitOK
}

// printNetworkAndToolGrants lists what the trusted project's extensions may
// fetch and which tools they may call (ABI 1.1), next to the fs grants.
func printNetworkAndToolGrants(stdout io.Writer, dir string) {
	cfg, err := config.Load(config.LoadOptions{Cwd: dir, Trust: true})
	if err != nil {
		return
	}
	for _, e := range cfg.Extensions {
		if e.Scope != config.ScopeProject {
			continue
		}
		if len(e.Grants.HTTP) > 0 {
			fmt.Fprintf(stdout, "  extension %s: may fetch %s\n", e.Name, strings.Join(e.Grants.HTTP, ", "))
		}
		if len(e.Grants.Tools) > 0 {
			fmt.Fprintf(stdout, "  extension %s: may call the tools %s\n", e.Name, strings.Join(e.Grants.Tools, ", "))
		}
	}
}

// projectFile returns the project pi.toml that applies in cwd (the nearest
// one from cwd up to the project root), or "" when there is none.
func projectFile(cwd string) (string, error) {
	cfg, err := config.Load(config.LoadOptions{Cwd: cwd, Trust: true})
	if err != nil {
		return "", err
	}
	return cfg.ProjectFile, nil
}
