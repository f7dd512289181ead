package extensions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
	"github.com/pi-go/pi/tools/builtin"
)

// The tool_call params on the wire carry "paths": the real paths for a path
// tool, [] for one that names none; a guest sees exactly that JSON.
func TestToolCallWireHasPaths(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, ".env"), []byte("A=1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(base, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, extensions.Options{ProjectRoot: base, Cwd: base})
	load(t, h, extensions.Spec{Name: "sandbox", Path: goGuest(t, sandboxGuest), Config: map[string]any{"echo_tool_call": true}})
	hooks := h.Hooks()
	ts, err := tool.WrapAll(builtin.Definitions(builtin.Options{}), func(string) tool.Context { return tool.Context{Cwd: base} })
	if err != nil {
		t.Fatal(err)
	}
	for input, want := range map[string]string{
		`read {"path":"notes.txt"}`:   `"toolCallId":"call-1","toolName":"read","input":{"path":"notes.txt"},"paths":["` + filepath.Join(base, ".env") + `"]`,
		`bash {"command":"cat .env"}`: `"toolCallId":"call-1","toolName":"bash","input":{"command":"cat .env"},"paths":[]`,
	} {
		name, args, _ := strings.Cut(input, " ")
		r := run(context.Background(), ts, hooks, name, args)
		if !r.IsError || !strings.Contains(r.Text(), want) {
			t.Errorf("%s: the guest saw %s, want %s", name, r.Text(), want)
		}
	}
}
