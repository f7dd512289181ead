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
)

// commonFlags are the flags every command that builds the runtime accepts.
type commonFlags struct {
	cwd        string
	configFile string
	logLevel   string
	tools      string
	trust      bool
	extensions stringList // -e FILE.wasm, repeatable
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.cwd, "cwd", "", "run in `DIR` instead of the current directory")
	fs.StringVar(&c.configFile, "config", "", "use the pi.toml at `FILE` instead of the project's")
	fs.StringVar(&c.logLevel, "log-level", "warn", "log `LEVEL` on stderr: trace, debug, info, warn, error, off")
	fs.StringVar(&c.tools, "tools", "", "active tools, comma-separated `LIST` (e.g. read,bash,grep); overrides pi.toml")
	fs.BoolVar(&c.trust, "trust", false, "trust this project's pi.toml for this run (also PI_TRUST=1)")
	fs.Var(&c.extensions, "e", "load the extension `FILE.wasm` for this run (repeatable; no grants)")
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
		Extensions: c.extensions, Tools: tools, Model: model,
		LogOutput: stderr, LogLevel: c.logLevel,
		OnWarning:   func(w string) { fmt.Fprintf(stderr, "pi: warning: %s\n", w) },
		HostVersion: version,
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
