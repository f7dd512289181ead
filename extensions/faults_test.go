package extensions_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

// TestHostileModules loads each hostile module, calls its misbehaving tool,
// and checks that the call fails with a message naming the extension and the
// fault, and that the next call of a tool works on a fresh instance.
func TestHostileModules(t *testing.T) {
	cases := []struct {
		name   string
		limits extensions.Limits
		want   []string
	}{
		{"trap", extensions.Limits{}, []string{"unreachable"}},
		{"loop", extensions.Limits{TimeoutMS: 200}, []string{"timed out after 200ms"}},
		{"membomb", extensions.Limits{MemoryMB: 4}, []string{"unreachable", "memory is near its limit: 3.1 of 4 MiB in use"}},
		{"badjson", extensions.Limits{}, []string{"malformed response"}},
		{"oob", extensions.Limits{}, []string{"out of bounds"}},
		{"oversize", extensions.Limits{}, []string{"17825792-byte response, over the 16 MiB limit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs logBuffer
			h := newHost(t, extensions.Options{Logger: newLogger(&logs)})
			e := load(t, h, extensions.Spec{Name: c.name, Path: wat(t, c.name), Limits: c.limits})
			ts := tools(t, e)
			start := time.Now()
			r := run(context.Background(), ts, nil, "bad", `{}`)
			if !r.IsError {
				t.Fatalf("bad call succeeded: %+v", r)
			}
			msg := r.Text()
			for _, w := range append([]string{"extension " + c.name + ": tool.execute failed: ", "fault 1 of 3", "the next call starts a fresh one"}, c.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("message has more than one line: %q", msg)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the fault took %s to surface", d)
			}
			if !strings.Contains(logs.String(), "ext."+c.name+": extension fault") {
				t.Errorf("fault not logged under the extension's name:\n%s", logs.String())
			}
			for i := 0; i < 2; i++ {
				if r := run(context.Background(), ts, nil, "ok", `{}`); r.IsError || r.Text() != "ok" {
					t.Fatalf("call %d after the fault = %+v", i, r)
				}
			}
		})
	}
}

func TestFaultError(t *testing.T) {
	h := newHost(t, extensions.Options{})
	e := load(t, h, extensions.Spec{Path: wat(t, "trap")})
	exec := e.Definitions()[1].Execute // "bad"
	_, err := exec(context.Background(), tool.NewCall("c", []byte(`{}`), nil), tool.Context{})
	var fe *extensions.FaultError
	if !errors.As(err, &fe) || !errors.Is(err, extensions.ErrFault) || errors.Is(err, extensions.ErrDisabled) {
		t.Fatalf("err = %#v", err)
	}
	if fe.Extension != "trap" || fe.Method != "tool.execute" || fe.InARow != 1 || fe.Disabled {
		t.Fatalf("fault = %+v", fe)
	}
}

// TestDisabledAfterThreeFaults: faults in a row disable the extension;
// an answered call in between resets the count.
func TestDisabledAfterThreeFaults(t *testing.T) {
	h := newHost(t, extensions.Options{})
	e := load(t, h, extensions.Spec{Path: wat(t, "trap")})
	ts := tools(t, e)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		run(ctx, ts, nil, "bad", `{}`)
	}
	if r := run(ctx, ts, nil, "ok", `{}`); r.IsError {
		t.Fatalf("ok after 2 faults = %+v", r)
	}
	for i := 1; i <= 2; i++ {
		r := run(ctx, ts, nil, "bad", `{}`)
		if want := []string{"", "fault 1 of 3", "fault 2 of 3"}[i]; !strings.Contains(r.Text(), want) {
			t.Fatalf("fault %d: %q (the count was not reset by the answered call)", i, r.Text())
		}
	}
	r := run(ctx, ts, nil, "bad", `{}`)
	if !strings.Contains(r.Text(), "fault 3 of 3") || !strings.Contains(r.Text(), "now disabled") {
		t.Fatalf("third fault = %q", r.Text())
	}
	if !e.Disabled() {
		t.Fatal("not disabled")
	}
	for _, name := range []string{"ok", "bad"} {
		r := run(ctx, ts, nil, name, `{}`)
		if !r.IsError || !strings.Contains(r.Text(), "extension trap: tool.execute: extension disabled after 3 faults in a row (last: pi_call: wasm error: unreachable") {
			t.Fatalf("%s after disabling = %q", name, r.Text())
		}
	}
	// Other extensions of the same host are unaffected.
	g := load(t, h, extensions.Spec{Path: wat(t, "good")})
	if r := run(ctx, tools(t, g), nil, "hello", `{}`); r.IsError {
		t.Fatalf("good after trap was disabled = %+v", r)
	}
}

// TestCancelIsNotAFault: a call cancelled by its caller ends promptly,
// discards the instance, and does not count as a fault.
func TestCancelIsNotAFault(t *testing.T) {
	h := newHost(t, extensions.Options{})
	e := load(t, h, extensions.Spec{Path: wat(t, "loop")})
	ts := tools(t, e)
	for i := 0; i < 4; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		r := run(ctx, ts, nil, "bad", `{}`)
		cancel()
		if !r.IsError || !strings.Contains(r.Text(), "context deadline exceeded") || strings.Contains(r.Text(), "fault") {
			t.Fatalf("cancelled call %d = %q", i, r.Text())
		}
	}
	if e.Disabled() {
		t.Fatal("cancellations disabled the extension")
	}
	if r := run(context.Background(), ts, nil, "ok", `{}`); r.IsError {
		t.Fatalf("ok after cancellations = %+v", r)
	}
}

func TestHookFaults(t *testing.T) {
	var logs logBuffer
	h := newHost(t, extensions.Options{Logger: newLogger(&logs)})
	e := load(t, h, extensions.Spec{Path: wat(t, "chaos")})
	ts := tools(t, e)
	hooks := h.Hooks()
	ctx := context.Background()
	if len(hooks.ToolCall) != 1 || len(hooks.ToolResult) != 1 || hooks.ToolCall[0].Name != "extension chaos" {
		t.Fatalf("hooks = %+v", hooks)
	}

	t.Run("tool_call fault blocks the call", func(t *testing.T) {
		r := run(ctx, ts, hooks, "ok", `{"x":"HOOKTRAP"}`)
		if !r.IsError || !strings.Contains(r.Text(), "Tool execution was blocked: extension chaos failed: extension chaos: hook.tool_call failed: pi_call: wasm error: unreachable") {
			t.Fatalf("result = %q", r.Text())
		}
	})
	t.Run("tool_result fault keeps the result", func(t *testing.T) {
		var res tool.Result
		hk := &tool.Hooks{ToolResult: hooks.ToolResult}
		tl := tool.Find(ts, "ok")
		res = tool.Execute(ctx, tl, hk, "c", tool.RawArgs([]byte(`{"x":"HOOKTRAP"}`)), nil)
		if res.IsError || res.Text() != "ok" {
			t.Fatalf("result = %+v", res)
		}
		if !strings.Contains(logs.String(), "tool_result hook failed; the result is unchanged") {
			t.Fatalf("not logged:\n%s", logs.String())
		}
	})
	t.Run("bash_spawn fault stops the command", func(t *testing.T) {
		sh := h.SpawnHooks()
		if len(sh) != 1 {
			t.Fatalf("spawn hooks = %d", len(sh))
		}
		in := tool.BashSpawn{Command: "echo HOOKTRAP", Cwd: "/", Env: map[string]string{}}
		if _, err := sh[0].Func(ctx, in); err == nil || !strings.Contains(err.Error(), "extension chaos: hook.bash_spawn failed") {
			t.Fatalf("err = %v", err)
		}
	})
	// The tool_result fault and the bash_spawn fault came in a row (after the
	// answered "ok" call); a third fault disables the extension, and its
	// tool_call hook then blocks every call (fail closed).
	r := run(ctx, ts, hooks, "ok", `{"x":"HOOKTRAP"}`)
	if !strings.Contains(r.Text(), "fault 3 of 3") {
		t.Fatalf("third fault = %q", r.Text())
	}
	r = run(ctx, ts, hooks, "ok", `{}`)
	if !r.IsError || !strings.Contains(r.Text(), "extension disabled") {
		t.Fatalf("call after 3 hook faults = %q", r.Text())
	}
}

// TestChaosFaults covers each kind of bad answer, one extension, with an
// answered call in between so the count never reaches three.
func TestChaosFaults(t *testing.T) {
	h := newHost(t, extensions.Options{})
	e := load(t, h, extensions.Spec{Path: wat(t, "chaos"), Limits: extensions.Limits{TimeoutMS: 300}})
	ts := tools(t, e)
	ctx := context.Background()
	for _, c := range []struct{ tool, want string }{
		{"trap", "pi_call: wasm error: unreachable"},
		{"loop", "timed out after 300ms"},
		{"badjson", "malformed response: unexpected EOF"},
		{"oob", "pi_call returned response 0x7ffffff0+64, out of bounds of the 65536-byte memory"},
		{"garbage", "empty response"},
		{"wrongshape", "tool.execute result: json: cannot unmarshal string into Go struct field"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			r := run(ctx, ts, nil, c.tool, `{}`)
			if !r.IsError || !strings.Contains(r.Text(), "extension chaos: tool.execute failed: "+c.want) {
				t.Fatalf("result = %q", r.Text())
			}
			if r := run(ctx, ts, nil, "ok", `{}`); r.IsError {
				t.Fatalf("ok after %s = %+v", c.tool, r)
			}
		})
	}
}

// TestCloseAbortsCallsInFlight: closing the host ends a running call
// promptly.
func TestCloseAbortsCallsInFlight(t *testing.T) {
	h, err := extensions.NewHost(context.Background(), extensions.Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	loop := load(t, h, extensions.Spec{Path: wat(t, "loop"), Limits: extensions.Limits{TimeoutMS: 60_000}})
	done := startLooping(t, context.Background(), loop)
	start := time.Now()
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if !r.IsError || !strings.Contains(r.Text(), "extension loop: tool.execute: the extension host was closed during the call") {
			t.Fatalf("result = %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call was still running 10s after Close")
	}
	t.Logf("call ended %s after Close", time.Since(start))
}

// TestDeclaredMemoryOverLimit: a module whose declared minimum memory
// exceeds the extension's limit is refused at load, naming the limit; a
// declared maximum above the limit is lowered to it (wazero's rule).
func TestDeclaredMemoryOverLimit(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot(t), watPath("good")))
	if err != nil {
		t.Fatal(err)
	}
	wat(t, "good") // the wat2wasm check
	variant := func(memory string) string {
		v := strings.Replace(string(src), `(memory (export "memory") 2)`, `(memory (export "memory") `+memory+`)`, 1)
		dir := t.TempDir()
		in, out := filepath.Join(dir, "v.wat"), filepath.Join(dir, "v.wasm")
		os.WriteFile(in, []byte(v), 0o644)
		if b, err := exec.Command("wat2wasm", in, "-o", out).CombinedOutput(); err != nil {
			t.Fatalf("wat2wasm: %v\n%s", err, b)
		}
		return out
	}
	ctx := context.Background()
	bigMin := variant("200") // 12.5 MiB
	h := newHost(t, extensions.Options{})
	_, err = h.Load(ctx, extensions.Spec{Name: "good", Path: bigMin, Limits: extensions.Limits{MemoryMB: 8}})
	if err == nil || !strings.Contains(err.Error(), "load extension good") || !strings.Contains(err.Error(), "memory limit is 8 MiB") {
		t.Fatalf("err = %v", err)
	}
	h2 := newHost(t, extensions.Options{})
	if _, err := h2.Load(ctx, extensions.Spec{Name: "good", Path: bigMin, Limits: extensions.Limits{MemoryMB: 16}}); err != nil {
		t.Fatalf("under a 16 MiB limit: %v", err)
	}
	h3 := newHost(t, extensions.Options{})
	if _, err := h3.Load(ctx, extensions.Spec{Name: "good", Path: variant("2 1000"), Limits: extensions.Limits{MemoryMB: 8}}); err != nil {
		t.Fatalf("a declared maximum over the limit: %v", err)
	}
}

// startLooping calls loop.wat's "bad" tool in a goroutine and returns once
// the guest has emitted its "looping" progress: the call is then in flight,
// inside the guest's endless loop, holding the extension. The call's result
// arrives on the returned channel.
func startLooping(t *testing.T, ctx context.Context, loop *extensions.Extension) <-chan tool.Result {
	t.Helper()
	ts := tools(t, loop)
	inside := make(chan struct{})
	var once sync.Once
	done := make(chan tool.Result, 1)
	go func() {
		done <- tool.Run(ctx, ts, nil, "bad", "call-1", json.RawMessage(`{}`), func(tool.Result) { once.Do(func() { close(inside) }) })
	}()
	select {
	case <-inside:
		return done
	case r := <-done:
		t.Fatalf("the loop ended before it emitted its progress: %+v", r)
	case <-time.After(60 * time.Second):
		t.Fatal("the loop extension did not start looping within 60s")
	}
	return nil
}
