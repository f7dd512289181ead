// Package project makes the project folders the tests of the assembled pi
// (runtime/app, runtime/conversation) run in: a folder with .git (so the
// search for pi.toml and context files stops there) and a PI_HOME of its
// own, optionally with a pi.toml that loads the raw ABI 1.1 test guest
// (extensions/testdata/guests/raw11) under several names. It is imported
// only by tests.
package project

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/mcpserver"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

// New makes a project folder (with .git) and an empty PI_HOME, and sets
// PI_HOME for the test; OPENAI_API_KEY and OPENAI_BASE_URL are cleared so
// that no model of the environment is used.
func New(t testing.TB) (dir, home string) {
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

// Write writes data to the file at path.
func Write(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// SHA is the hex SHA-256 of the file at path, as pi.toml pins a module.
func SHA(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Extension is an [[extensions]] block of pi.toml loading the module at
// wasm as name, pinned by its SHA-256.
func Extension(t testing.TB, name, wasm string) string {
	t.Helper()
	return fmt.Sprintf("[[extensions]]\nname = %q\npath = %q\nsha256 = %q\n", name, wasm, SHA(t, wasm))
}

// MCPServer is an [[mcp]] block of pi.toml running the MCP test server
// (internal/mcptest) as name, with its markers in the folder markers;
// extra is added inside its env table (", KEY = \"value\"").
func MCPServer(t testing.TB, name, markers, extra string) string {
	t.Helper()
	return fmt.Sprintf("[[mcp]]\nname = %q\ncommand = [%q]\nenv = { MCPTEST_MARKER_DIR = %q%s }\n", name, mcpserver.Server(t), markers, extra)
}

// RawGuest is the ABI 1.1 test guest written without the SDK (its config
// keys are listed in its main.go).
const RawGuest = "extensions/testdata/guests/raw11"

// RawEntry is an [[extensions]] block loading the raw guest.
type RawEntry struct {
	Name   string
	Grants string // TOML lines under [extensions.grants]
	Limits string // TOML lines under [extensions.limits]
	Config string // TOML lines under [extensions.config] (name is added)
}

// Raw makes a project (New) whose pi.toml loads the raw guest once per
// entry, and returns the project folder and PI_HOME.
func Raw(t testing.TB, entries ...RawEntry) (dir, home string) {
	t.Helper()
	dir, home = New(t)
	wasm := plugin.BuildGo(t, RawGuest)
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(Extension(t, e.Name, wasm))
		if e.Grants != "" {
			fmt.Fprintf(&b, "[extensions.grants]\n%s\n", e.Grants)
		}
		if e.Limits != "" {
			fmt.Fprintf(&b, "[extensions.limits]\n%s\n", e.Limits)
		}
		fmt.Fprintf(&b, "[extensions.config]\nname = %q\n%s\n", e.Name, e.Config)
	}
	Write(t, filepath.Join(dir, "pi.toml"), b.String())
	return dir, home
}
