package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pi-go/pi/internal/suggest"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/manage"
)

// commonFlags are the flags every command that builds the runtime accepts.
type commonFlags struct {
	cwd        string
	configFile string
	logLevel   string
	tools      string
	trust      bool
	sandbox    string
	extensions extFlags // -e FILE.wasm [--grant ...] [--ext-config ...], repeatable
}

// grantKinds is what the --grant flags' help says a grant is: one example
// of each kind runtime/extspec knows.
const grantKinds = "fs=ro:PATH, fs=rw:PATH, exec=CMD, env=NAME, http=URLPATTERN, tool=NAME, llm=true, model=true"

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.cwd, "cwd", "", "run in `DIR` instead of the current directory")
	fs.StringVar(&c.configFile, "config", "", "use the pi.toml at `FILE` instead of the project's")
	c.logLevel = "warn"
	// The flag package adds "(default warn)": the text does not say it.
	fs.Var((*logLevelFlag)(&c.logLevel), "log-level", "log `LEVEL` on stderr: trace, debug, info, warn, error, off")
	fs.StringVar(&c.tools, "tools", "", "active tools, comma-separated `LIST` (e.g. read,bash,grep); overrides pi.toml")
	fs.BoolVar(&c.trust, "trust", false, "trust this project's pi.toml for this run (also PI_TRUST=1)")
	fs.StringVar(&c.sandbox, "sandbox", "", "run bash commands under sandbox `MODE`: "+strings.Join(app.SandboxModes(), ", ")+" (default workspace-write, or [sandbox] mode)")
	fs.Var(extFileFlag{&c.extensions}, "e", "load the extension `FILE.wasm` for this run (repeatable; no sha256 check; grants and config only from the flags after it)")
	fs.Var(extGrantFlag{&c.extensions}, "grant", "grant `KIND=VALUE` ("+grantKinds+") to the -e extension before it; repeatable")
	fs.Var(extConfigFlag{&c.extensions}, "ext-config", "set `KEY=VALUE` (VALUE in TOML: n=3, 'greeting=\"hi\"') in the config of the -e extension before it; repeatable")
}

// appOptions are the runtime's options from the flags; warnings and logs go
// to stderr.
func (c *commonFlags) appOptions(stderr io.Writer, model app.ModelOptions) app.Options {
	var tools []string
	if c.tools != "" {
		tools = splitList(c.tools)
		if tools == nil {
			tools = []string{}
		}
	}
	return app.Options{
		Cwd: c.cwd, ConfigFile: c.configFile, Trust: c.trust || os.Getenv("PI_TRUST") == "1",
		ExtensionFlags: c.extensions.list, Tools: tools, Model: model, Sandbox: c.sandbox,
		SandboxPrivate:   filepath.SplitList(os.Getenv(envSandboxPrivate)),
		ConfineFileTools: os.Getenv(envConfineFileTools) == "1",
		LogOutput:        stderr, LogLevel: c.logLevel,
		OnWarning:   func(w string) { fmt.Fprintf(stderr, "pi: warning: %s\n", w) },
		HostVersion: version,
		// A module the compilation cache lost says so before the wait.
		CompileProgress: compileProgress(stderr),
	}
}

// envSandboxPrivate names folders, os.PathListSeparator-separated, whose
// contents bash commands must not see (app.Options.SandboxPrivate): what
// pi fleet sets for its runs, so that a run sees no other run's workspace.
const envSandboxPrivate = "PI_SANDBOX_PRIVATE"

// envConfineFileTools, when "1", keeps the file tools to the project, the
// working directory and $TMPDIR (app.Options.ConfineFileTools): what pi
// fleet sets for its runs.
const envConfineFileTools = "PI_CONFINE_FILE_TOOLS"

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// parseInterleaved parses flags that may stand before or after positional
// arguments (`pi -p "PROMPT" --model M` works). A lone "--" ends flags.
// On an error it returns the positional arguments before it too.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return pos, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// flag stops at "--" too: everything after it is positional.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseArgs parses flags and positional arguments. done reports that the
// command should return code at once: 0 after --help (the usage went to
// stdout), exitUsage after a flag error (one line saying what was wrong,
// with the closest flag for an unknown one, and a --help hint on stderr).
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, code int, done bool) {
	return parseArgsWith(fs, args, parseInterleaved)
}

// parseArgsWith is parseArgs with parse in place of parseInterleaved
// (extflags.go keeps extensions' flags aside).
func parseArgsWith(fs *flag.FlagSet, args []string, parse func(*flag.FlagSet, []string) ([]string, error)) (pos []string, code int, done bool) {
	out, _ := flagSetOutputs.LoadAndDelete(fs)
	o, _ := out.(flagOutputs)
	pos, err := parse(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		if o.stdout != nil {
			fmt.Fprintln(o.stdout, strings.TrimSpace(o.usage))
			fmt.Fprintln(o.stdout, "\nFlags:")
			fs.SetOutput(o.stdout)
			fs.PrintDefaults()
		}
		return nil, exitOK, true
	case err != nil:
		if o.stderr != nil {
			fmt.Fprintf(o.stderr, "%s: %s\nRun '%s --help' for usage.\n", fs.Name(), flagError(fs, err), fs.Name())
		}
		return nil, exitUsage, true
	}
	return pos, 0, false
}

// flagError rewords the flag package's errors: an unknown flag is named as
// it was typed, with the closest defined flag when one is close.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "flag provided but not defined: -")
	if !ok {
		return msg
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	dashes := "--"
	if len(name) == 1 {
		dashes = "-"
	}
	msg = "unknown flag " + dashes + name
	if s := suggest.Closest(name, names); s != "" {
		d := "--"
		if len(s) == 1 {
			d = "-"
		}
		msg += "; did you mean " + d + s + "?"
	}
	return msg
}

// flagOutputs are where a flag set's help and errors go (newFlagSet).
type flagOutputs struct {
	usage          string
	stdout, stderr io.Writer
}

// flagSetOutputs maps a *flag.FlagSet made by newFlagSet to its outputs,
// until parseArgs uses them.
var flagSetOutputs sync.Map

// logLevelFlag is --log-level: one of the levels, checked when parsed.
type logLevelFlag string

func (l *logLevelFlag) String() string { return string(*l) }
func (l *logLevelFlag) Set(v string) error {
	switch strings.ToLower(v) {
	case "trace", "debug", "info", "warn", "error", "off":
		*l = logLevelFlag(strings.ToLower(v))
		return nil
	}
	return fmt.Errorf("want one of trace, debug, info, warn, error, off")
}

// resolveCwd returns dir as an absolute path; "" is the current directory.
func resolveCwd(dir string) string {
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// newFlagSet returns a flag set for parseArgs: --help prints the given
// text then the flags on stdout; a flag error is one line on stderr.
func newFlagSet(name, usage string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	flagSetOutputs.Store(fs, flagOutputs{usage: usage, stdout: stdout, stderr: stderr})
	return fs
}

// groupHelp handles the first argument of a command with subcommands (pi
// tool, pi ext, ...): help, -h or --help print usage on stdout (exit 0);
// no argument prints it on stderr (exit 2). done false means go on.
func groupHelp(args []string, usage string, stdout, stderr io.Writer) (code int, done bool) {
	switch {
	case len(args) == 0:
		fmt.Fprintln(stderr, strings.TrimSpace(usage))
		return exitUsage, true
	case args[0] == "--help" || args[0] == "-h" || args[0] == "help":
		fmt.Fprintln(stdout, strings.TrimSpace(usage))
		return exitOK, true
	}
	return 0, false
}

// usageError prints a message and a hint to use --help; it returns
// exitUsage. cmd is the command ("" for pi itself).
func usageError(stderr io.Writer, cmd, format string, args ...any) int {
	name := strings.TrimSpace("pi " + cmd)
	fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", name, fmt.Sprintf(format, args...), name)
	return exitUsage
}

// extFlags collects -e FILE.wasm with the --grant and --ext-config flags
// that follow each: a --grant or --ext-config applies to the nearest -e
// before it on the command line (so `-e a.wasm --grant fs=ro:. -e b.wasm`
// grants a only), and one before any -e is an error.
type extFlags struct {
	list []app.ExtensionFlag
}

// last is the -e the next --grant or --ext-config applies to.
func (x *extFlags) last(flag string) (*app.ExtensionFlag, error) {
	if len(x.list) == 0 {
		return nil, fmt.Errorf("%s applies to the -e FILE.wasm before it; put it after one", flag)
	}
	return &x.list[len(x.list)-1], nil
}

type extFileFlag struct{ x *extFlags }

func (f extFileFlag) String() string {
	if f.x == nil {
		return ""
	}
	var paths []string
	for _, e := range f.x.list {
		paths = append(paths, e.Path)
	}
	return strings.Join(paths, ",")
}

func (f extFileFlag) Set(v string) error {
	f.x.list = append(f.x.list, app.ExtensionFlag{Path: v})
	return nil
}

type extGrantFlag struct{ x *extFlags }

func (f extGrantFlag) String() string { return "" }

func (f extGrantFlag) Set(v string) error {
	e, err := f.x.last("--grant")
	if err != nil {
		return err
	}
	return e.Grants.AddFlag(v)
}

type extConfigFlag struct{ x *extFlags }

func (f extConfigFlag) String() string { return "" }

func (f extConfigFlag) Set(v string) error {
	e, err := f.x.last("--ext-config")
	if err != nil {
		return err
	}
	kv, err := manage.ParseExtensionConfig("", []string{v})
	if err != nil {
		return err
	}
	if e.Config == nil {
		e.Config = map[string]any{}
	}
	for k, val := range kv {
		e.Config[k] = val
	}
	return nil
}
