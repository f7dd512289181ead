package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pi-go/pi/internal/testkit/mcpserver"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/internal/testkit/proc"
)

// withPluginKit removes the modules internal/testkit/plugin built once the tests ran.
type withPluginKit struct{ m *testing.M }

func (w withPluginKit) Run() int {
	code := plugin.Main(w.m)
	mcpserver.Cleanup()
	return code
}

func TestMain(m *testing.M) {
	testscript.Main(withPluginKit{m}, map[string]func(){
		"pi": func() { os.Exit(profiled(func() int { return program(os.Args[1:], os.Stdin, os.Stdout, os.Stderr) })) },
	})
}

// profiled runs the test binary's pi with profiles when
// PI_TEST_CPUPROFILE names a folder: each process writes its CPU profile
// to <folder>/<kind>-<pid>.prof and its allocations to <kind>-<pid>.mem
// (kind is script for a --script run, else run) — a profile of pi itself
// in the process-level benchmarks (BenchmarkTurnsProcess), not of the
// test's servers.
func profiled(run func() int) int {
	dir := os.Getenv("PI_TEST_CPUPROFILE")
	if dir == "" {
		return run()
	}
	kind := "run"
	if slices.Contains(os.Args, "--script") {
		kind = "script"
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.prof", kind, os.Getpid())))
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpu profile:", err)
		return 1
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "cpu profile:", err)
		return 1
	}
	code := run()
	pprof.StopCPUProfile()
	if m, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.mem", kind, os.Getpid()))); err == nil {
		_ = pprof.Lookup("allocs").WriteTo(m, 0)
		m.Close()
	}
	return code
}

// goEnv is the Go build environment the demo's `go run` needs inside a
// script's sandboxed HOME.
var goEnv = func() []string {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		return nil
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(vals) != 3 {
		return nil
	}
	return []string{"GOCACHE=" + vals[0], "GOMODCACHE=" + vals[1], "GOPATH=" + vals[2], "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}
}()

// buildWasm builds the extensions the scripts install into one folder: Go
// examples built for wasip1 and the extension host's test modules
// (extensions/testdata/*.wat) assembled with wat2wasm (each once per test
// binary, by the shared internal/testkit/plugin kit).
func buildWasm(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, path := range map[string]string{
		"loc":           plugin.BuildGo(t, "examples/plugins/loc"),
		"protect-paths": plugin.BuildGo(t, "examples/plugins/protect-paths"),
		"nomarker":      plugin.BuildWAT(t, "extensions/testdata/nomarker.wat"),
		"trap":          plugin.BuildWAT(t, "extensions/testdata/trap.wat"),
		"clash":         plugin.ScaffoldWATTool(t, "myread", "read", "clash", `[]`),
		"loc2":          plugin.ScaffoldWATTool(t, "loc2", "loc", "loc2", `[]`),
	} {
		if err := os.Symlink(path, filepath.Join(dir, name+".wasm")); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestScripts runs the CLI scripts in testdata/script: each is a txtar
// archive of files plus `exec pi ...` lines with their expected output.
// $ESCAPE is the escape helper of internal/testkit/proc, named $ESCTOK.
func TestScripts(t *testing.T) {
	wasm := buildWasm(t)
	esc := proc.Escape(t)
	mcpServer := mcpserver.Server(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("WASM", wasm)
			env.Setenv("ESCAPE", esc.Path)
			env.Setenv("ESCTOK", esc.Token)
			env.Setenv("MCPSERVER", mcpServer)
			env.Setenv("PI_HOME", filepath.Join(env.WorkDir, ".pihome"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("OPENAI_API_KEY", "")
			env.Setenv("OPENAI_BASE_URL", "")
			env.Setenv("PI_TRUST", "")
			env.Setenv("PI_CACHE_DIR", os.Getenv("PI_CACHE_DIR")) // plugin.CacheDir, shared
			for _, kv := range goEnv {
				k, v, _ := strings.Cut(kv, "=")
				env.Setenv(k, v)
			}
			return os.MkdirAll(filepath.Join(env.WorkDir, "home"), 0o755)
		},
	})
}
