package app

import (
	"context"
	"encoding/json"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/manage"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/tool"
)

// mismatchProject installs guard (a module declaring hooks, whose tool is
// "guard") and the hello-wat example into a trusted project, then
// replaces guard's installed file by another build of the same extension
// that declares replacementHooks: what a rebuild copied over the
// installed file, or an attacker, leaves behind.
func mismatchProject(t *testing.T, hooks, replacementHooks string, global bool) (dir, home, guardFile string) {
	t.Helper()
	dir, home = project(t)
	ctx := context.Background()
	scope := manage.Scope{Cwd: dir, PIHome: home, Global: global}
	inst, err := manage.Install(ctx, manage.InstallRequest{Scope: scope, Source: plugin.ScaffoldWAT(t, "guard", "guard", hooks)})
	if err != nil {
		t.Fatal(err)
	}
	hello := filepath.Join(dir, "hello.wasm")
	write(t, hello, string(mustRead(t, repoWAT(t))))
	if _, err := manage.Install(ctx, manage.InstallRequest{Scope: manage.Scope{Cwd: dir, PIHome: home}, Source: hello}); err != nil {
		t.Fatal(err)
	}
	write(t, inst.Dest, string(mustRead(t, plugin.ScaffoldWAT(t, "guard", "evil", replacementHooks))))
	return dir, home, inst.Dest
}

func repoWAT(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "hello.wasm")
	src := filepath.Join("..", "..", "examples", "plugins", "hello-wat", "hello.wat")
	if b, err := exec.Command("wat2wasm", src, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, b)
	}
	return out
}

// openWarnings opens the runtime and collects its warnings.
func openWarnings(t *testing.T, dir, home string) (*Runtime, []string) {
	t.Helper()
	var mu sync.Mutex
	var warnings []string
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, OnWarning: func(w string) {
		mu.Lock()
		defer mu.Unlock()
		warnings = append(warnings, w)
	}})
	if err != nil {
		t.Fatalf("open with one changed module: %v", err)
	}
	t.Cleanup(rt.Close)
	return rt, warnings
}

func TestSHA256MismatchDisablesOnlyThatExtension(t *testing.T) {
	dir, home, file := mismatchProject(t, `[]`, `[]`, false)
	rt, warnings := openWarnings(t, dir, home)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "extension guard disabled") || !strings.Contains(warnings[0], "`pi ext update guard`") ||
		!strings.Contains(warnings[0], file) || !strings.Contains(warnings[0], "its tools (guard) answer with this error") {
		t.Errorf("warnings = %q", warnings)
	}
	// The rest of pi works.
	if text, isErr := callText(t, rt, "hello", `{"name":"x"}`); isErr || text != "Hello, x!" {
		t.Errorf("hello = %q", text)
	}
	if text, isErr := callText(t, rt, "ls", `{}`); isErr {
		t.Errorf("ls = %q", text)
	}
	// Its tool answers with the reason; the changed module never ran.
	if text, isErr := callText(t, rt, "guard", `{}`); !isErr || !strings.Contains(text, "pi ext update guard") || strings.Contains(text, "evil") {
		t.Errorf("guard = %q, %v", text, isErr)
	}
	if len(rt.Extensions()) != 1 {
		t.Errorf("loaded = %+v", rt.Extensions())
	}
	// pi ext list says so too.
	list, err := manage.ListExtensions(context.Background(), manage.Scope{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if e.Name == "guard" && !strings.Contains(e.Problem, "pi ext update guard") {
			t.Errorf("list problem = %q", e.Problem)
		}
	}
}

// A security hook that cannot run blocks: whatever the changed file
// declares, the pinned module's hooks are what count.
func TestSHA256MismatchFailsClosedOnHooks(t *testing.T) {
	for _, c := range []struct {
		name, hooks, replacement string
		forgetRecord             bool
		toolCall, toolResult     bool
	}{
		{"tool_call hook, replacement declares none", `["tool_call"]`, `[]`, false, true, false},
		{"tool_result hook", `["tool_result"]`, `["tool_result"]`, false, false, true},
		{"no record of the pinned module: every hook assumed", `[]`, `[]`, true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, home, _ := mismatchProject(t, c.hooks, c.replacement, false)
			if c.forgetRecord {
				if err := os.RemoveAll(filepath.Join(home, "cache", "declared")); err != nil {
					t.Fatal(err)
				}
			}
			rt, warnings := openWarnings(t, dir, home)
			text, isErr := callText(t, rt, "hello", `{"name":"x"}`)
			switch {
			case c.toolCall:
				if !isErr || !strings.Contains(text, "Blocked") || !strings.Contains(text, "pi ext update guard") {
					t.Errorf("hello through a disabled tool_call hook = %q", text)
				}
			case c.toolResult:
				if !isErr || strings.Contains(text, "Hello, x!") || !strings.Contains(text, "withheld") {
					t.Errorf("hello through a disabled tool_result hook = %q", text)
				}
			default:
				if isErr {
					t.Errorf("hello = %q", text)
				}
			}
			if c.forgetRecord && (len(warnings) != 1 || !strings.Contains(warnings[0], "assumes every hook")) {
				t.Errorf("warnings = %q", warnings)
			}
		})
	}
}

// The bash_spawn stand-in stops every command, and a tool_result one
// drops the details too (they may hold what the hook would have hidden).
func TestDisabledHookStandIns(t *testing.T) {
	hooks := &tool.Hooks{}
	spawn := addDisabledHooks([]disabledExtension{{spec: extensions.Spec{Name: "g"}, short: "g is disabled"}}, hooks)
	if len(spawn) != 1 || len(hooks.ToolCall) != 1 || len(hooks.ToolResult) != 1 {
		t.Fatalf("stand-ins: %d spawn, %+v", len(spawn), hooks)
	}
	if _, err := spawn[0].Func(context.Background(), tool.BashSpawn{Command: "true"}); err == nil || !strings.Contains(err.Error(), "g is disabled") {
		t.Errorf("spawn = %v", err)
	}
	p, err := hooks.ToolResult[0].Func(context.Background(), tool.CallInfo{}, tool.Result{Content: []tool.ContentBlock{tool.Text("secret")}, Details: map[string]any{"k": "secret"}})
	r := p.Apply(tool.Result{Content: []tool.ContentBlock{tool.Text("secret")}, Details: map[string]any{"k": "secret"}})
	if err != nil || !r.IsError || strings.Contains(r.Text(), "secret") || string(r.Details.(json.RawMessage)) != "null" {
		t.Errorf("result = %+v, %v", r, err)
	}
}

func TestSHA256MismatchOfAGlobalExtensionNamesGlobal(t *testing.T) {
	dir, home, _ := mismatchProject(t, `[]`, `[]`, true)
	_, warnings := openWarnings(t, dir, home)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "`pi ext update guard --global`") {
		t.Errorf("warnings = %q", warnings)
	}
}

// Other load failures still stop the run: a pinned module that is the
// pinned one but fails to load is not a mismatch.
func TestOtherLoadFailuresStillStop(t *testing.T) {
	dir, home := project(t)
	bad := filepath.Join(dir, "bad.wasm")
	write(t, bad, "not wasm")
	toml := filepath.Join(dir, "pi.toml")
	write(t, toml, "[[extensions]]\nname = \"bad\"\npath = \"bad.wasm\"\nsha256 = \""+sha(t, bad)+"\"\n")
	if err := config.Trust(home, toml); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), Options{Cwd: dir, PIHome: home}); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("open = %v", err)
	}
}
