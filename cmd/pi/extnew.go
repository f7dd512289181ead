package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/internal/scaffold"
	"github.com/pi-go/pi/runtime/manage"
)

// toolchainHints say, per language, what builds a scaffolded project.
var toolchainHints = map[string]string{
	"go":   "needs the Go toolchain only (pisdk/ holds pi's SDK; no network)",
	"c":    "needs clang, lld and wasi-libc (Debian: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32)",
	"rust": "needs rustc with the wasm32-wasi standard library (Debian: apt-get install rustc libstd-rust-dev-wasm32)",
	"wat":  "needs wat2wasm (Debian: apt-get install wabt)",
}

func cmdExtNew(args []string, stdout, stderr io.Writer) int {
	var lang, dir string
	fs := newFlagSet("pi ext new", extUsage, stdout, stderr)
	fs.StringVar(&lang, "lang", "", "the project's language: `go`, c, rust or wat (required)")
	fs.StringVar(&dir, "dir", "", "write the project into `DIR` (default ./NAME; must be new or empty)")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) != 1 {
		return usageError(stderr, "ext new", "want one extension NAME, got %s", plural.Count(len(pos), "argument"))
	}
	if lang == "" {
		return usageError(stderr, "ext new", "--lang is required: go, c, rust or wat")
	}
	name := pos[0]
	if dir == "" {
		dir = name
	}
	files, err := scaffold.Write(scaffold.Options{Dir: dir, Name: name, Lang: lang, PiVersion: version})
	if err != nil {
		fmt.Fprintf(stderr, "pi ext new: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "wrote %s extension %s in %s (%s):\n", lang, name, dir, toolchainHints[lang])
	for _, f := range files {
		if !strings.HasPrefix(f, "pisdk/") {
			fmt.Fprintf(stdout, "  %s\n", f)
		}
	}
	if lang == "go" {
		fmt.Fprintf(stdout, "  pisdk/ (pi's Go SDK, a local module)\n")
	}
	fmt.Fprintf(stdout, "next:\n  cd %s && ./build.sh && ./test.sh\n  pi ext install %s.wasm     # then: pi ext dev %s after each change\n", dir, name, dir)
	return exitOK
}

func cmdExtDev(args []string, stdout, stderr io.Writer) int {
	var global, watch bool
	var cwd string
	fs := newFlagSet("pi ext dev", extUsage, stdout, stderr)
	fs.BoolVar(&global, "global", false, "update the extension of $PI_HOME/pi.toml instead of the project's")
	fs.BoolVar(&watch, "watch", false, "rebuild and update again whenever a file in DIR changes, until interrupted")
	fs.StringVar(&cwd, "cwd", "", "act as if run in `DIR` (the project whose pi.toml is updated)")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) != 1 {
		return usageError(stderr, "ext dev", "want one extension project DIR, got %s", plural.Count(len(pos), "argument"))
	}
	dir, err := filepath.Abs(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "pi ext dev: %v\n", err)
		return exitError
	}
	if _, err := os.Stat(filepath.Join(dir, "build.sh")); err != nil {
		fmt.Fprintf(stderr, "pi ext dev: %s has no build.sh: pi ext new writes one; your own must build the module into the path given as its first argument\n", dir)
		return exitError
	}
	scope := manage.Scope{Cwd: resolveCwd(cwd), Global: global}
	if !watch {
		return devOnce(dir, scope, stdout, stderr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	last := fingerprint(dir)
	devOnce(dir, scope, stdout, stderr)
	fmt.Fprintf(stdout, "watching %s (Ctrl-C to stop)\n", dir)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return exitOK
		case <-tick.C:
		}
		if fp := fingerprint(dir); fp != last {
			last = fp
			devOnce(dir, scope, stdout, stderr)
			fmt.Fprintf(stdout, "watching %s (Ctrl-C to stop)\n", dir)
		}
	}
}

// devOnce builds the project in dir with its build.sh into a private
// folder, checks the module, and updates the installed extension of its
// name; when none is installed it leaves DIR/NAME.wasm and says how to
// install it.
func devOnce(dir string, scope manage.Scope, stdout, stderr io.Writer) int {
	tmp, err := os.MkdirTemp("", "pi-dev-")
	if err != nil {
		fmt.Fprintf(stderr, "pi ext dev: %v\n", err)
		return exitError
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "ext.wasm")
	start := time.Now()
	fmt.Fprintf(stdout, "building %s\n", dir)
	cmd := exec.Command("sh", filepath.Join(dir, "build.sh"), out)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, stderr, stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(stderr, "pi ext dev: build.sh failed (%v); nothing was updated\n", err)
		return exitError
	}
	if _, err := os.Stat(out); err != nil {
		fmt.Fprintf(stderr, "pi ext dev: build.sh did not write the module to its first argument (%s); nothing was updated\n", out)
		return exitError
	}
	ctx := context.Background()
	info, err := manage.Inspect(ctx, scope, out, nil, stderr, version)
	if err != nil {
		fmt.Fprintf(stderr, "pi ext dev: the new build is refused, nothing was updated: %v\n", err)
		return exitError
	}
	up, err := manage.Update(ctx, manage.UpdateRequest{Scope: scope, Name: info.Name, Source: out, LogOutput: stderr, HostVersion: version})
	if errors.Is(err, manage.ErrNotInstalled) {
		keep := filepath.Join(dir, info.Name+".wasm")
		data, rerr := os.ReadFile(out)
		if rerr == nil {
			rerr = os.WriteFile(keep, data, 0o644)
		}
		if rerr != nil {
			fmt.Fprintf(stderr, "pi ext dev: %v\n", rerr)
			return exitError
		}
		fmt.Fprintf(stdout, "built %s (%.1fs); %s is not installed here, so nothing was updated: install it once with\n  pi ext install %s%s [--grant ...] [--ext-config ...]\nthen run pi ext dev %s after each change.\n",
			keep, time.Since(start).Seconds(), info.Name, keep, globalFlag(scope), dir)
		return exitOK
	}
	if err != nil && up.TOML == "" {
		fmt.Fprintf(stderr, "pi ext dev: %s refused, nothing written: %v\n", info.Name, err)
		return exitError
	}
	fmt.Fprintf(stdout, "built in %.1fs\n", time.Since(start).Seconds())
	printUpdated(stdout, up)
	if err != nil {
		fmt.Fprintf(stderr, "pi ext dev: %v\n", err)
		return exitError
	}
	return exitOK
}

func globalFlag(s manage.Scope) string {
	if s.Global {
		return " --global"
	}
	return ""
}

// fingerprint sums up the names, sizes and times of the files under dir
// that a build reads: everything but hidden folders, build outputs
// (*.wasm, target/) and the SDK copy.
func fingerprint(dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(name, ".") || name == "target" || name == "pisdk") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".wasm") {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		}
		return nil
	})
	return b.String()
}
