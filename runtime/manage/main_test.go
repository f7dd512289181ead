package manage

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-go/pi/internal/testkit/mcpserver"
	"github.com/pi-go/pi/internal/testkit/plugin"
	testproject "github.com/pi-go/pi/internal/testkit/project"
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

// The project, file and sha256 helpers are the test kit's.
var (
	project = testproject.New
	write   = testproject.Write
	sha     = testproject.SHA
)

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
