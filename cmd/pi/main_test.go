package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"pi": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
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

// wasmDir holds the extensions the scripts install: Go examples built for
// wasip1 and test modules assembled from testdata/*.wat, built once per test
// binary.
var wasmDir = struct {
	once sync.Once
	dir  string
	err  error
}{}

func buildWasm(t *testing.T) string {
	t.Helper()
	wasmDir.once.Do(func() {
		dir, err := os.MkdirTemp("", "pi-cli-wasm-")
		if err != nil {
			wasmDir.err = err
			return
		}
		wasmDir.dir = dir
		for _, ex := range []string{"loc", "protect-paths"} {
			cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", filepath.Join(dir, ex+".wasm"), "./examples/plugins/"+ex)
			cmd.Dir = "../.."
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
			if out, err := cmd.CombinedOutput(); err != nil {
				wasmDir.err = fmt.Errorf("build %s: %v\n%s", ex, err, out)
				return
			}
		}
		for _, w := range []string{"nomarker", "trap"} {
			out, err := exec.Command("wat2wasm", "../../testdata/"+w+".wat", "-o", filepath.Join(dir, w+".wasm")).CombinedOutput()
			if err != nil {
				wasmDir.err = fmt.Errorf("wat2wasm %s (install the Debian package wabt; scripts/test does): %v\n%s", w, err, out)
				return
			}
		}
	})
	if wasmDir.err != nil {
		t.Fatal(wasmDir.err)
	}
	return wasmDir.dir
}

// TestScripts runs the CLI scripts in testdata/script: each is a txtar
// archive of files plus `exec pi ...` lines with their expected output.
func TestScripts(t *testing.T) {
	wasm := buildWasm(t)
	t.Cleanup(func() { os.RemoveAll(wasm) })
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("WASM", wasm)
			env.Setenv("PI_HOME", filepath.Join(env.WorkDir, ".pihome"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("OPENAI_API_KEY", "")
			env.Setenv("OPENAI_BASE_URL", "")
			env.Setenv("PI_TRUST", "")
			for _, kv := range goEnv {
				k, v, _ := strings.Cut(kv, "=")
				env.Setenv(k, v)
			}
			return os.MkdirAll(filepath.Join(env.WorkDir, "home"), 0o755)
		},
	})
}
