package execgrant

import (
	"fmt"
	"path"
	"strings"
)

// codeRunners are the commands known to run arbitrary code when an
// extension may choose their arguments, or even with fixed arguments through
// configuration or files the extension might write. Each is a path.Match
// glob on the command's base name. This is the one list: `pi ext install`
// warns from it and docs/config.md points here.
var codeRunners = []struct{ glob, why string }{
	{"sh", "is a shell"}, {"bash", "is a shell"}, {"zsh", "is a shell"}, {"dash", "is a shell"},
	{"ash", "is a shell"}, {"ksh", "is a shell"}, {"mksh", "is a shell"}, {"fish", "is a shell"},
	{"csh", "is a shell"}, {"tcsh", "is a shell"}, {"busybox", "is a shell and every other tool"},
	{"pwsh", "is a shell"}, {"powershell", "is a shell"}, {"cmd", "is a shell"},
	{"env", "runs the command named in its arguments"}, {"xargs", "runs the command named in its arguments"},
	{"nice", "runs the command named in its arguments"}, {"nohup", "runs the command named in its arguments"},
	{"timeout", "runs the command named in its arguments"}, {"time", "runs the command named in its arguments"},
	{"stdbuf", "runs the command named in its arguments"}, {"setsid", "runs the command named in its arguments"},
	{"chroot", "runs the command named in its arguments"}, {"unshare", "runs the command named in its arguments"},
	{"nsenter", "runs the command named in its arguments"}, {"flock", "runs the command named in its arguments"},
	{"watch", "runs the command named in its arguments"}, {"script", "runs the command named in its arguments"},
	{"strace", "runs the command named in its arguments"}, {"gdb", "runs programs and commands"},
	{"expect", "runs scripts"},
	{"sudo", "runs any command as another user"}, {"doas", "runs any command as another user"},
	{"su", "runs any command as another user"}, {"pkexec", "runs any command as another user"},
	{"find", "runs commands with -exec and -ok"},
	{"git", "runs programs from its configuration and the repository's: aliases (git -c alias.x='!sh' x), core.pager, core.fsmonitor, core.sshCommand, hooks, diff and merge drivers"},
	{"go", "builds and runs code (go run, go test, go generate, -toolexec, cgo)"},
	{"make", "runs the recipes of any Makefile"}, {"gmake", "runs the recipes of any Makefile"},
	{"cmake", "runs scripts"}, {"ninja", "runs the rules of its build file"},
	{"cargo", "builds and runs code (build scripts, cargo run)"},
	{"npm", "runs package scripts"}, {"npx", "downloads and runs packages"}, {"yarn", "runs package scripts"},
	{"pnpm", "runs package scripts"}, {"bun", "runs code"}, {"deno", "runs code"},
	{"node", "runs code"}, {"nodejs", "runs code"},
	{"python*", "runs code"}, {"pip*", "runs package build scripts"}, {"perl*", "runs code"},
	{"ruby*", "runs code"}, {"irb", "runs code"}, {"php*", "runs code"}, {"lua*", "runs code"},
	{"tclsh*", "runs code"}, {"Rscript", "runs code"}, {"R", "runs code"}, {"julia", "runs code"},
	{"java", "runs code"}, {"jshell", "runs code"}, {"osascript", "runs code"},
	{"awk", "runs commands with system() and pipes"}, {"gawk", "runs commands with system() and pipes"},
	{"mawk", "runs commands with system() and pipes"}, {"nawk", "runs commands with system() and pipes"},
	{"sed", "runs commands with GNU sed's e command and s///e"},
	{"ssh", "runs commands on other machines, and locally through ProxyCommand"},
	{"scp", "runs a program given with -S"}, {"rsync", "runs a program given with -e"},
	{"tar", "runs programs given with --to-command or --use-compress-program"},
	{"zip", "runs a program given with -TT"},
	{"docker", "runs containers that can mount the host (root-equivalent)"},
	{"podman", "runs containers that can mount the host"}, {"nerdctl", "runs containers that can mount the host"},
	{"kubectl", "runs commands in containers"},
	{"vi", "runs shell commands (:!)"}, {"vim", "runs shell commands (:!)"}, {"nvim", "runs shell commands (:!)"},
	{"emacs", "runs code"}, {"ed", "runs shell commands (!)"}, {"ex", "runs shell commands (!)"},
	{"less", "runs shell commands (!) and LESSOPEN"}, {"more", "runs shell commands (!)"},
	{"man", "runs a pager and preprocessors"},
}

// RunsCode says why a granted pattern lets an extension run arbitrary code,
// or "" when its command is not known to. A command-name pattern with glob
// characters is checked against every listed command it could name; an
// argument pattern whose command is a wildcard can name any program. A
// listed command warns even with fixed arguments: narrowing them helps, but
// the command can still run code from configuration or files (git's
// core.fsmonitor runs on `git status`). An invalid pattern gets "".
func RunsCode(pattern string) string {
	p, err := Parse(pattern)
	if err != nil {
		return ""
	}
	cmd, wild := p.command()
	if wild {
		if p.HasArgs() {
			return fmt.Sprintf("exec grant %q can run arbitrary code: its command is a wildcard, so it allows any program, shells included", pattern)
		}
		for _, c := range codeRunners {
			if ok, _ := path.Match(cmd, strings.TrimSuffix(c.glob, "*")); ok {
				return fmt.Sprintf("exec grant %q can run arbitrary code: it matches %s, which %s", pattern, strings.TrimSuffix(c.glob, "*"), c.why)
			}
		}
		return ""
	}
	base := path.Base(cmd)
	for _, c := range codeRunners {
		if ok, _ := path.Match(c.glob, base); ok {
			if p.HasArgs() {
				return fmt.Sprintf("exec grant %q narrows the arguments, but %s %s; check that no argument it allows, and no file the extension can write, makes it run code", pattern, base, c.why)
			}
			return fmt.Sprintf("exec grant %q can run arbitrary code: %s %s; a pattern with a space fixes the arguments too, e.g. %q", pattern, base, c.why, base+" --version")
		}
	}
	return ""
}

// command returns the command part of the pattern and whether it holds a
// wildcard: the whole name for a command-name pattern, the tokens before
// the first space otherwise.
func (p Pattern) command() (string, bool) {
	if !p.HasArgs() {
		return p.name, strings.ContainsAny(p.name, "*?[\\")
	}
	var b strings.Builder
	for _, t := range p.toks {
		switch t.kind {
		case tokSep:
			return b.String(), false
		case tokLit:
			b.WriteRune(t.r)
		default:
			return b.String(), true
		}
	}
	return b.String(), false
}
