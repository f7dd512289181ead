// Package mcpserver builds pi's MCP test server (runtime/mcp/internal/
// testserver) once per test binary, for the tests of runtime/mcp,
// runtime/app and cmd/pi. It is imported only by tests.
package mcpserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	mu   sync.Mutex
	dir  string
	path string
)

// Main runs the tests and removes the built server: call it from TestMain
// as os.Exit(mcpserver.Main(m)), or call Cleanup after m.Run.
func Main(m *testing.M) int {
	code := m.Run()
	Cleanup()
	return code
}

// Cleanup removes the built server.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
		dir, path = "", ""
	}
}

// Server builds the stdio test server (once per test binary) and returns
// the path of its executable.
func Server(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if path != "" {
		return path
	}
	d, err := os.MkdirTemp("", "pi-testkit-mcpserver-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(d, "mcp-testserver")
	cmd := exec.Command("go", "build", "-o", out, "./runtime/mcp/internal/testserver/cmd/mcp-testserver")
	cmd.Dir = moduleRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(d)
		t.Fatalf("build the MCP test server: %v\n%s", err, b)
	}
	dir, path = d, out
	return path
}

func moduleRoot(t testing.TB) string {
	t.Helper()
	d, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			t.Fatal("no go.mod above the test's folder")
		}
		d = parent
	}
}
