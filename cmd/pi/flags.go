package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/config"
)

// commonFlags are the flags every command that builds the runtime accepts.
type commonFlags struct {
	cwd        string
	configFile string
	logLevel   string
	tools      string
	trust      bool
	extensions extFlags // -e FILE.wasm [--grant ...] [--ext-config ...], repeatable
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.cwd, "cwd", "", "run in `DIR` instead of the current directory")
	fs.StringVar(&c.configFile, "config", "", "use the pi.toml at `FILE` instead of the project's")
	fs.StringVar(&c.logLevel, "log-level", "warn", "log `LEVEL` on stderr: trace, debug, info, warn, error, off")
	fs.StringVar(&c.tools, "tools", "", "active tools, comma-separated `LIST` (e.g. read,bash,grep); overrides pi.toml")
	fs.BoolVar(&c.trust, "trust", false, "trust this project's pi.toml for this run (also PI_TRUST=1)")
	fs.Var(extFileFlag{&c.extensions}, "e", "load the extension `FILE.wasm` for this run (repeatable; no sha256 check; grants and config only from the flags after it)")
	fs.Var(extGrantFlag{&c.extensions}, "grant", "grant `KIND=VALUE` (fs=ro:PATH, fs=rw:PATH, exec=CMD, env=NAME) to the -e extension before it; repeatable")
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
		ExtensionFlags: c.extensions.list, Tools: tools, Model: model,
		LogOutput: stderr, LogLevel: c.logLevel,
		OnWarning:   func(w string) { fmt.Fprintf(stderr, "pi: warning: %s\n", w) },
		HostVersion: version,
		// A module the compilation cache lost says so before the wait.
		CompileProgress: compileProgress(stderr),
	}
}

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
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
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
// command should return code at once: 0 after --help, exitUsage after a
// flag error (the flag package has printed what was wrong and the usage).
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, code int, done bool) {
	pos, err := parseInterleaved(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil, exitOK, true
	case err != nil:
		return nil, exitUsage, true
	}
	return pos, 0, false
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

// newFlagSet returns a flag set whose usage prints the given text then the
// flags, and whose errors go to stderr.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, strings.TrimSpace(usage))
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// usageError prints a message and a hint to use --help; it returns exitUsage.
func usageError(stderr io.Writer, cmd, format string, args ...any) int {
	fmt.Fprintf(stderr, "pi %s: %s\nRun 'pi %s --help' for usage.\n", cmd, fmt.Sprintf(format, args...), cmd)
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
	kv, err := config.ParseExtensionConfig("", []string{v})
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
