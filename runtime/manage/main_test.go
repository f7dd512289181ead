package manage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-go/pi/internal/testkit/mcpserver"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/app"
)

// TestMain makes the test binary a child subreaper (the tests open real
// runtimes, whose bash calls and MCP servers it must reap) and runs the
// tests.
func TestMain(m *testing.M) {
	if err := app.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := plugin.Main(m)
	mcpserver.Cleanup()
	os.Exit(code)
}

// project makes a project folder (with .git, so the search stops there)
// and an empty PI_HOME.
func project(t *testing.T) (dir, home string) {
	t.Helper()
	dir, home = t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PI_HOME", home)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	return dir, home
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sha(t *testing.T, path string) string {
	t.Helper()
	s := sha256.Sum256(readFile(t, path))
	return hex.EncodeToString(s[:])
}

func mustReal(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// callText calls the tool name of a real runtime and returns its text and
// whether it is an error.
func callText(t *testing.T, rt *app.Runtime, name, input string) (string, bool) {
	t.Helper()
	res, err := rt.CallTool(context.Background(), name, "c1", json.RawMessage(input), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Text(), res.IsError
}
