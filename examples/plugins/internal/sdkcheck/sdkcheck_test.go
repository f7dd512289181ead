//go:build !wasip1

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/tool"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

func load(t testing.TB, spec extensions.Spec) *plugin.Loaded {
	t.Helper()
	wasm := plugin.BuildGo(t, "examples/plugins/internal/sdkcheck")
	spec.Name = "sdkcheck"
	return plugin.Load(t, wasm, t.TempDir(), spec)
}

func details(t *testing.T, r tool.Result) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.Details)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("details %s: %v", b, err)
	}
	return m
}

func TestInfo(t *testing.T) {
	l := load(t, extensions.Spec{})
	info := l.Ext.Info()
	var names []string
	for _, ts := range info.Tools {
		names = append(names, ts.Name)
	}
	if got := strings.Join(names, ","); got != "exec,count,panic,state,host_call,image,echo,events,crash" {
		t.Errorf("tools %s", got)
	}
	if strings.Join(info.Hooks, ",") != "tool_call,event" || strings.Join(info.Wants.Exec, ",") != "sh" {
		t.Errorf("hooks %v wants %+v", info.Hooks, info.Wants)
	}
	var def tool.ToolDefinition
	for _, d := range l.Ext.Definitions() {
		if d.Name == "exec" {
			def = d
		}
	}
	if def.ExecutionMode != tool.Sequential {
		t.Errorf("exec execution mode %q", def.ExecutionMode)
	}
	var schema map[string]any
	if err := json.Unmarshal(def.Parameters, &schema); err != nil || schema["additionalProperties"] != false {
		t.Errorf("derived schema %s (%v)", def.Parameters, err)
	}
}

func TestExec(t *testing.T) {
	l := load(t, extensions.Spec{Grants: extensions.Grants{Exec: []string{"sh"}, FS: []string{"ro:."}}}) // exec runs inside fs grants only
	big := 200_000                                                                                       // larger than the sdk's 64 KiB host_call buffer: fetched with host_take
	tests := []struct {
		name    string
		args    any
		want    string
		isError bool
	}{
		{"small", map[string]any{"argv": []string{"sh", "-c", "printf 'hi %s' \"$(cat)\""}, "stdin": "there"}, "hi there", false},
		{"large answer", map[string]any{"argv": []string{"sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x"}}, strings.Repeat("x", big), false},
		{"denied", map[string]any{"argv": []string{"ls"}}, "exec failed (host error: true): host call exec: permission denied", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := l.Run(t, "exec", tc.args)
			if r.IsError != tc.isError {
				t.Fatalf("isError %v: %.300s", r.IsError, r.Text())
			}
			if tc.isError {
				if !strings.Contains(r.Text(), tc.want) {
					t.Errorf("got %q, want it to contain %q", r.Text(), tc.want)
				}
				return
			}
			if r.Text() != tc.want {
				t.Errorf("got %d bytes %.80q, want %d bytes %.80q", len(r.Text()), r.Text(), len(tc.want), tc.want)
			}
		})
	}
	t.Run("cwd and timeout", func(t *testing.T) {
		if err := os.Mkdir(filepath.Join(l.Cwd, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if r := l.Run(t, "exec", map[string]any{"argv": []string{"sh", "-c", "pwd"}, "cwd": "sub"}); r.IsError || r.Text() != filepath.Join(l.Cwd, "sub")+"\n" {
			t.Errorf("pwd in sub: %q", r.Text())
		}
		start := time.Now()
		r := l.Run(t, "exec", map[string]any{"argv": []string{"sh", "-c", "sleep 5"}, "timeoutMs": 200})
		if !r.IsError || !strings.Contains(r.Text(), "deadline exceeded") {
			t.Errorf("sleep with a 200ms timeout: %q", r.Text())
		}
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("the timeout did not stop the command: %v", d)
		}
	})
	t.Run("exit code", func(t *testing.T) {
		r := l.Run(t, "exec", map[string]any{"argv": []string{"sh", "-c", "echo oops >&2; exit 3"}})
		d := details(t, r)
		if r.IsError || d["exitCode"] != 3.0 || d["stderr"] != "oops\n" {
			t.Errorf("result %q details %v", r.Text(), d)
		}
	})
}

func TestEmitAndCancel(t *testing.T) {
	l := load(t, extensions.Spec{})
	var updates []string
	raw := json.RawMessage(`{"n":5}`)
	r := tool.Run(context.Background(), l.Tools, nil, "count", "c1", raw, func(p tool.Result) { updates = append(updates, p.Text()) })
	if r.Text() != "counted to 5" || strings.Join(updates, ",") != "1,2,3,4,5" {
		t.Fatalf("result %q updates %v", r.Text(), updates)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	updates = nil
	tool.Run(ctx, l.Tools, nil, "count", "c2", json.RawMessage(`{"n":1000}`), func(p tool.Result) {
		updates = append(updates, p.Text())
		if len(updates) == 3 {
			cancel()
		}
	})
	if strings.Join(updates, ",") != "1,2,3" {
		t.Errorf("updates after cancel %v: the guest should stop emitting", updates)
	}
}

func TestPanicIsAnErrorResultAndTheInstanceLives(t *testing.T) {
	l := load(t, extensions.Spec{})
	r := l.Run(t, "panic", map[string]any{})
	if !r.IsError || !strings.Contains(r.Text(), `panic in tool "panic"`) || !strings.Contains(r.Text(), "nil pointer dereference") {
		t.Errorf("got %q", r.Text())
	}
	if r := l.Run(t, "echo", map[string]any{"text": "still here"}); r.Text() != "hooked: still here" {
		t.Errorf("after the panic: %q", r.Text())
	}
	if l.Ext.Disabled() {
		t.Error("a panic answered as an error must not count as a fault")
	}
}

// A crash the sdk cannot turn into an answer is a fault: the call fails with
// a message naming the extension, and the next call gets a fresh instance.
func TestCrashIsAFault(t *testing.T) {
	for _, how := range []string{"goroutine", "exit"} {
		t.Run(how, func(t *testing.T) {
			l := load(t, extensions.Spec{})
			l.Host.Event(context.Background(), map[string]any{"type": "agent_start"})
			if r := l.Run(t, "events", map[string]any{}); r.Text() != "agent_start" {
				t.Fatalf("events before the crash: %q", r.Text())
			}
			r := l.Run(t, "crash", map[string]any{"how": how})
			if !r.IsError || !strings.Contains(r.Text(), "sdkcheck") {
				t.Errorf("crash result %q (isError %v), want an error naming the extension", r.Text(), r.IsError)
			}
			if r := l.Run(t, "crash", map[string]any{"how": "no"}); r.IsError || r.Text() != "no crash" {
				t.Errorf("after the crash: %q", r.Text())
			}
			if r := l.Run(t, "events", map[string]any{}); r.Text() != "" {
				t.Errorf("events after the crash %q: want a fresh instance", r.Text())
			}
		})
	}
}

func TestStateFromInit(t *testing.T) {
	t.Setenv("SDKCHECK_VAR", "granted value")
	l := load(t, extensions.Spec{Config: map[string]any{"level": "high", "n": 2}, Grants: extensions.Grants{Env: []string{"SDKCHECK_VAR"}, Exec: []string{"git"}}})
	r := l.Run(t, "state", map[string]any{})
	d := details(t, r)
	if r.IsError {
		t.Fatalf("state: %s", r.Text())
	}
	cfg, _ := json.Marshal(d["config"])
	if string(cfg) != `{"level":"high","n":2}` {
		t.Errorf("config %s", cfg)
	}
	if d["cwd"] != l.Cwd || d["callCwd"] != l.Cwd || d["host"] != "pi-test/0.0.0" || d["toolCallId"] != "call-1" || d["env"] != "granted value" {
		t.Errorf("state %v (cwd %s)", d, l.Cwd)
	}
	g, _ := json.Marshal(d["grants"])
	if !strings.Contains(string(g), `"exec":["git"]`) || !strings.Contains(string(g), `"env":["SDKCHECK_VAR"]`) {
		t.Errorf("grants %s", g)
	}
}

func TestUnknownHostMethod(t *testing.T) {
	l := load(t, extensions.Spec{})
	r := l.Run(t, "host_call", map[string]any{"method": "teleport"})
	if !r.IsError || !strings.Contains(r.Text(), "host error: ") || !strings.Contains(r.Text(), "teleport") {
		t.Errorf("got %q", r.Text())
	}
}

func TestImageLogsAndTerminate(t *testing.T) {
	l := load(t, extensions.Spec{})
	r := l.Run(t, "image", map[string]any{})
	if r.IsError || !r.Terminate || len(r.Content) != 2 || r.Content[1].Type != "image" || r.Content[1].MimeType != "image/png" || r.Content[1].Data != "iVBORw0KGgo=" {
		t.Errorf("result %+v", r)
	}
	logs := l.Logs()
	for _, w := range []string{"debug line", "warn line 7", "stdout line"} {
		if !strings.Contains(logs, w) {
			t.Errorf("logs lack %q:\n%s", w, logs)
		}
	}
}

func TestToolCallHookReplacesInput(t *testing.T) {
	l := load(t, extensions.Spec{})
	tests := []struct {
		text, want string
		isError    bool
	}{
		{"abc", "hooked: abc", false},
		{"block me", `echo of "block me" is not allowed`, true},
		{"invalid", `Validation failed for tool "echo"`, true},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			r := l.Run(t, "echo", map[string]any{"text": tc.text})
			if r.IsError != tc.isError || !strings.Contains(r.Text(), tc.want) {
				t.Errorf("got %q (isError %v), want %q", r.Text(), r.IsError, tc.want)
			}
		})
	}
}

func TestEvents(t *testing.T) {
	l := load(t, extensions.Spec{})
	ctx := context.Background()
	l.Host.Event(ctx, map[string]any{"type": "agent_start"})
	l.Host.Event(ctx, map[string]any{"type": "turn_start", "turn": 1})
	l.Host.Event(ctx, map[string]any{"type": "turn_end", "turn": 1})
	if r := l.Run(t, "events", map[string]any{}); r.Text() != "agent_start,turn_start,turn_end" {
		t.Errorf("events seen %q", r.Text())
	}
}
