package extensions_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

func TestToolCallAndResultHooks(t *testing.T) {
	h := newHost(t, extensions.Options{})
	g := load(t, h, extensions.Spec{Path: wat(t, "good")})
	ts := tools(t, g)
	hooks := h.Hooks()
	if len(hooks.ToolCall) != 1 || len(hooks.ToolResult) != 1 || hooks.ToolResult[0].Name != "extension good" {
		t.Fatalf("hooks = %+v", hooks)
	}
	ctx := context.Background()
	cases := []struct {
		name, input string
		wantText    string
		wantError   bool
	}{
		{"pass", `{"name":"anne"}`, "hello from wat", false},
		{"block", `{"name":"BLOCKME"}`, "blocked by good: BLOCKME", true},
		{"patch the result", `{"name":"PATCHME"}`, "patched by good", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(ctx, ts, hooks, "hello", c.input)
			if r.Text() != c.wantText || r.IsError != c.wantError {
				t.Fatalf("result = %+v", r)
			}
		})
	}
	t.Run("replace the input", func(t *testing.T) {
		args, blocked := tool.Preflight(ctx, tool.Find(ts, "hello"), hooks, "c", json.RawMessage(`{"name":"REPLACEME"}`))
		if blocked != nil || string(args.JSON) != `{"name":"replaced"}` {
			t.Fatalf("args = %s, blocked = %+v", args.JSON, blocked)
		}
	})
	t.Run("only declared hooks are sent", func(t *testing.T) {
		// trap.wat declares no hooks; its trapping "bad" tool would fault
		// if a hook request reached it... it answers "ok" to anything else,
		// so check the host did not even register hooks for it.
		h2 := newHost(t, extensions.Options{})
		load(t, h2, extensions.Spec{Path: wat(t, "trap")})
		if hk := h2.Hooks(); len(hk.ToolCall)+len(hk.ToolResult) != 0 || len(h2.SpawnHooks()) != 0 {
			t.Fatalf("hooks of an extension that declared none: %+v", hk)
		}
	})
}

func TestSpawnHook(t *testing.T) {
	h := newHost(t, extensions.Options{})
	load(t, h, extensions.Spec{Path: wat(t, "good")})
	sh := h.SpawnHooks()
	if len(sh) != 1 || sh[0].Name != "extension good" {
		t.Fatalf("spawn hooks = %+v", sh)
	}
	ctx := context.Background()
	in := tool.BashSpawn{Command: "make SPAWNME", Cwd: "/work", Env: map[string]string{"A": "1"}}
	out, err := sh[0].Func(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	// command omitted by the guest: kept; cwd replaced; env: GOOD added, and
	// A, which the guest was not granted (so not shown), kept.
	if out.Command != "make SPAWNME" || out.Cwd != "/tmp" || len(out.Env) != 2 || out.Env["GOOD"] != "1" || out.Env["A"] != "1" {
		t.Fatalf("spawn = %+v", out)
	}
	in = tool.BashSpawn{Command: "ls", Cwd: "/work", Env: map[string]string{"A": "1"}}
	if out, err := sh[0].Func(ctx, in); err != nil || out.Command != "ls" || out.Cwd != "/work" || out.Env["A"] != "1" {
		t.Fatalf("pass-through spawn = %+v, %v", out, err)
	}
	_, err = sh[0].Func(ctx, tool.BashSpawn{Command: "DENYME", Cwd: "/"})
	if err == nil || !strings.Contains(err.Error(), "extension good: hook.bash_spawn answered an error: DENYME is not allowed") {
		t.Fatalf("denied spawn err = %v", err)
	}
}

func TestEvent(t *testing.T) {
	var logs logBuffer
	h := newHost(t, extensions.Options{Logger: newLogger(&logs)})
	load(t, h, extensions.Spec{Path: wat(t, "good")})
	load(t, h, extensions.Spec{Path: wat(t, "trap")}) // no event hook: never sent one
	ctx := context.Background()
	h.Event(ctx, map[string]any{"type": "turn_start", "turn": 3})
	h.Event(ctx, map[string]any{"type": "message_update", "delta": "not for extensions"})
	h.Event(ctx, struct {
		Type string `json:"type"`
		Name string `json:"toolName"`
	}{"tool_execution_end", "hello"})
	h.Event(ctx, 42) // not an object: logged and dropped
	out := logs.String()
	if !strings.Contains(out, `ext.good: {"method":"event","params":{"turn":3,"type":"turn_start"}}`) {
		t.Fatalf("turn_start not delivered:\n%s", out)
	}
	if !strings.Contains(out, `{"method":"event","params":{"type":"tool_execution_end","toolName":"hello"}}`) {
		t.Fatalf("tool_execution_end not delivered:\n%s", out)
	}
	if strings.Contains(out, "message_update") {
		t.Fatalf("an event type outside the ABI was delivered:\n%s", out)
	}
	if !strings.Contains(out, "not an object with a type") {
		t.Fatalf("bad event not logged:\n%s", out)
	}
}

// TestHooksRunInLoadOrder: with two hook extensions the first block wins and
// patches chain in load order.
func TestHooksRunInLoadOrder(t *testing.T) {
	h := newHost(t, extensions.Options{})
	load(t, h, extensions.Spec{Path: wat(t, "chaos")})
	g := load(t, h, extensions.Spec{Path: wat(t, "good")})
	hooks := h.Hooks()
	if len(hooks.ToolCall) != 2 || hooks.ToolCall[0].Name != "extension chaos" || hooks.ToolCall[1].Name != "extension good" {
		t.Fatalf("order = %+v", hooks.ToolCall)
	}
	r := run(context.Background(), tools(t, g), hooks, "hello", `{"name":"BLOCKME"}`)
	if !r.IsError || r.Text() != "blocked by good: BLOCKME" {
		t.Fatalf("result = %+v", r)
	}
}
