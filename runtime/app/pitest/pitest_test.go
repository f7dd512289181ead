package pitest_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/app/pitest"
)

// The kit's own tests load real modules (a hand-written one, Go examples,
// a test guest) into a real pi.

func TestCallTool(t *testing.T) {
	wasm := pitest.BuildWAT(t, "../../../examples/plugins/hello-wat/hello.wat")
	pi := pitest.Load(t, pitest.Extension{Path: wasm})
	if got := pi.MustCall("hello", map[string]any{"name": "Ada"}); got != "Hello, Ada!" {
		t.Fatalf("hello = %q", got)
	}
	if r := pi.Call("hello", map[string]any{}); !r.IsError || !strings.Contains(r.Text, `Validation failed for tool "hello"`) {
		t.Fatalf("hello without a name = %+v", r)
	}
	if tools := pi.Tools(); !slices.Contains(tools, "hello") || !slices.Contains(tools, "read") {
		t.Fatalf("tools = %v, want the extension's and pi's", tools)
	}
	if exts := pi.Extensions(); len(exts) != 1 || exts[0].Name != "hello-wat" {
		t.Fatalf("extensions = %+v", exts)
	}
	if !strings.Contains(pi.Logs(), "hello-wat: init") {
		t.Errorf("the guest's log line is not in Logs:\n%s", pi.Logs())
	}
	// Built once per test binary: the same path again.
	if again := pitest.BuildWAT(t, "../../../examples/plugins/hello-wat/hello.wat"); again != wasm {
		t.Errorf("second build %s, first %s", again, wasm)
	}
}

// TestHooksGuardBuiltins: a hook-only extension is tested against pi's
// real built-in tools, in the project folder the kit made.
func TestHooksGuardBuiltins(t *testing.T) {
	wasm := pitest.BuildGo(t, "../../../examples/plugins/protect-paths")
	pi := pitest.New(t, pitest.Options{Files: map[string]string{"main.go": "package main\n"}}, pitest.Extension{Path: wasm})
	r := pi.Call("write", map[string]any{"path": ".env", "content": "SECRET=1\n"})
	if !r.IsError || !strings.Contains(r.Text, "protect-paths") {
		t.Fatalf("write .env = %+v", r)
	}
	if _, err := os.Stat(pi.Path(".env")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf(".env was written: %v", err)
	}
	pi.MustCall("write", map[string]any{"path": "notes.txt", "content": "ok\n"})
	if b, err := os.ReadFile(pi.Path("notes.txt")); err != nil || string(b) != "ok\n" {
		t.Fatalf("notes.txt = %q, %v", b, err)
	}
	if got := pi.MustCall("read", map[string]any{"path": "main.go"}); !strings.Contains(got, "package main") {
		t.Fatalf("read main.go = %q", got)
	}
}

// TestGrantsAndConfig: grants and config reach the extension, and no grant
// means no access.
func TestGrantsAndConfig(t *testing.T) {
	wasm := pitest.BuildGo(t, "../../../examples/plugins/loc")
	files := map[string]string{"a.go": "package a\n\nvar x = 1\n"}
	granted := pitest.New(t, pitest.Options{Files: files}, pitest.Extension{Path: wasm, Grants: []string{"fs=ro:."}})
	if got := granted.MustCall("loc", map[string]any{}); !strings.Contains(got, "Go: 1 file, 3 lines") {
		t.Fatalf("loc with fs=ro:. = %q", got)
	}
	bare := pitest.New(t, pitest.Options{Files: files}, pitest.Extension{Path: wasm})
	if r := bare.Call("loc", map[string]any{}); strings.Contains(r.Text, "Go: 1 file") {
		t.Fatalf("loc without a grant read the project: %+v", r)
	}

	redact := pitest.BuildGo(t, "../../../examples/plugins/redact")
	err := pitest.LoadErr(t, pitest.Options{}, pitest.Extension{Path: redact, Config: map[string]any{"patterns": []any{"[a-"}}})
	if !strings.Contains(err.Error(), `config patterns: "[a-"`) {
		t.Fatalf("bad config error = %v", err)
	}
	if err := pitest.LoadErr(t, pitest.Options{}, pitest.Extension{Path: "no-such.wasm"}); !strings.Contains(err.Error(), "no-such.wasm") {
		t.Fatalf("missing module error = %v", err)
	}
}

func TestCommand(t *testing.T) {
	wasm := pitest.BuildGo(t, "../../../extensions/testdata/guests/raw11")
	pi := pitest.Load(t, pitest.Extension{Path: wasm})
	res, err := pi.Command("raw", "ask twice")
	if err != nil || res.Text != "raw: ask twice" || res.Prompt != "twice" {
		t.Fatalf("/raw = %+v, %v", res, err)
	}
	if _, err := pi.Command("nosuch", ""); !errors.Is(err, app.ErrUnknownCommand) || !strings.Contains(err.Error(), "/raw") {
		t.Fatalf("/nosuch = %v", err)
	}
}
