package extensions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

const sandboxGuest = "extensions/testdata/guests/sandbox"

// sandboxFixture is a project with a read-only and a read-write directory
// and a secret outside both.
type sandboxFixture struct {
	root, ro, rw, secret string
	ts                   []tool.AgentTool
	host                 *extensions.Host
	ext                  *extensions.Extension
	logs                 *logBuffer
}

func newSandbox(t *testing.T, limits extensions.Limits) *sandboxFixture {
	t.Helper()
	base := t.TempDir()
	f := &sandboxFixture{root: filepath.Join(base, "project"), logs: &logBuffer{}}
	f.ro = filepath.Join(f.root, "src")
	f.rw = filepath.Join(f.root, "out")
	for _, d := range []string{f.ro, f.rw} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(f.ro, "main.go"), []byte("package main\n"), 0o644)
	f.secret = filepath.Join(base, "secret.txt")
	os.WriteFile(f.secret, []byte("top secret"), 0o644)
	env := map[string]string{"PI_GRANTED": "yes", "PI_NOT_GRANTED": "no"}
	f.host = newHost(t, extensions.Options{
		Logger:      newLogger(f.logs),
		ProjectRoot: f.root,
		Cwd:         f.root,
		HostName:    "pi-test",
		HostVersion: "9.9.9",
		LookupEnv:   func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	f.ext = load(t, f.host, extensions.Spec{
		Name: "sandbox",
		Path: goGuest(t, sandboxGuest),
		Grants: extensions.Grants{
			FS:   []string{"ro:src", "rw:out"},
			Exec: []string{"ech?", "sh"},
			Env:  []string{"PI_GRANTED", "PI_UNSET"},
		},
		Limits: limits,
		Config: map[string]any{"greeting": "hi"},
	})
	f.ts = tools(t, f.ext)
	return f
}

func (f *sandboxFixture) call(t *testing.T, name string, input any) tool.Result {
	t.Helper()
	b, _ := json.Marshal(input)
	return run(context.Background(), f.ts, nil, name, string(b))
}

func TestSandbox(t *testing.T) {
	f := newSandbox(t, extensions.Limits{})
	cases := []struct {
		name      string
		tool      string
		input     any
		wantError bool
		want      string
	}{
		{"read inside a ro grant", "read", map[string]string{"path": filepath.Join(f.ro, "main.go")}, false, "package main"},
		{"read outside the grants", "read", map[string]string{"path": f.secret}, true, ""},
		{"read the host root", "list", map[string]string{"path": "/"}, true, ""},
		{"write into a ro grant", "write", map[string]string{"path": filepath.Join(f.ro, "x.go"), "text": "x"}, true, ""},
		{"write into a rw grant", "write", map[string]string{"path": filepath.Join(f.rw, "x.txt"), "text": "made inside"}, false, "written"},
		{"write outside the grants", "write", map[string]string{"path": filepath.Join(filepath.Dir(f.secret), "escape.txt"), "text": "x"}, true, ""},
		{"dot-dot does not escape", "read", map[string]string{"path": filepath.Join(f.ro, "..", "..", "secret.txt")}, true, ""},
		{"granted env", "env", map[string]string{"name": "PI_GRANTED"}, false, `set=true value="yes" environ=1`},
		{"env not granted", "env", map[string]string{"name": "PI_NOT_GRANTED"}, false, `set=false value=""`},
		{"host env not leaked", "env", map[string]string{"name": "PATH"}, false, `set=false`},
		{"exec granted by glob", "exec", map[string]any{"argv": []string{"echo", "from", "guest"}, "cwd": "src"}, false, `"stdout":"from guest\n"`},
		{"exec not granted", "exec", map[string]any{"argv": []string{"cat", f.secret}, "cwd": "src"}, true, `permission denied: extension sandbox may not exec ["cat" "` + f.secret + `"] (grants.exec: ech?, sh)`},
		{"exec by path not granted", "exec", map[string]any{"argv": []string{"/bin/echo", "x"}, "cwd": "src"}, true, "permission denied"},
		{"clocks and random are real", "clock", map[string]any{}, false, "year=" + time.Now().Format("2006")},
		{"init params", "init_params", map[string]any{}, false, `"abi":1,"host":{"name":"pi-test","version":"9.9.9"},"cwd":"` + f.root + `","config":{"greeting":"hi"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := f.call(t, c.tool, c.input)
			if r.IsError != c.wantError || !strings.Contains(r.Text(), c.want) || strings.Contains(r.Text(), "top secret") {
				t.Fatalf("result = %+v", r)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(f.rw, "x.txt")); err != nil || string(b) != "made inside" {
		t.Fatalf("rw write did not reach the host: %q %v", b, err)
	}
	for _, p := range []string{filepath.Join(f.ro, "x.go"), filepath.Join(filepath.Dir(f.secret), "escape.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("%s was written", p)
		}
	}
	r := f.call(t, "clock", map[string]any{})
	if strings.Contains(r.Text(), "random=00000000000000000000000000000000") {
		t.Fatalf("random is not random: %s", r.Text())
	}
	r = f.call(t, "init_params", map[string]any{})
	if !strings.Contains(r.Text(), `"grants":{"fs":["ro:`+f.ro+`","rw:`+f.rw+`"],"exec":["ech?","sh"],"env":["PI_GRANTED","PI_UNSET"]}`) {
		t.Fatalf("init grants = %s", r.Text())
	}
}

func TestSandboxHostImportMisuse(t *testing.T) {
	f := newSandbox(t, extensions.Limits{})
	r := f.call(t, "misuse", map[string]any{})
	// The codes are the ones docs/abi.md documents.
	for _, w := range []string{"take-nothing=-3", "call-oob=-1", "emit-bad=-5", "emit-oob=-1", "take-small=-4", "take-ok=true",
		`unknown-method=unknown host method "nosuch"`} {
		if !strings.Contains(r.Text(), w) {
			t.Errorf("misuse result lacks %q:\n%s", w, r.Text())
		}
	}
	if r.IsError {
		t.Fatalf("misuse is not a fault: %+v", r)
	}
}

func TestSandboxGuestPanic(t *testing.T) {
	f := newSandbox(t, extensions.Limits{})
	r := f.call(t, "panic", map[string]any{})
	if !r.IsError || !strings.Contains(r.Text(), "extension sandbox: tool.execute failed: pi_call: wasm error: unreachable") {
		t.Fatalf("panic result = %q", r.Text())
	}
	logs := f.logs.String()
	if !strings.Contains(logs, "ext.sandbox: about to panic") || !strings.Contains(logs, "panic: guest panic on purpose") || !strings.Contains(logs, "stream=stderr") {
		t.Fatalf("guest stderr not in the logs:\n%s", logs)
	}
	if r := f.call(t, "echo", map[string]any{"a": 1}); r.IsError || r.Text() != `{"a":1}` {
		t.Fatalf("echo after panic = %+v", r)
	}
}

func TestSandboxSleepBoundedByDeadline(t *testing.T) {
	// The limit also bounds the next call, which starts a fresh instance:
	// long enough for that under the race detector on a loaded machine.
	f := newSandbox(t, extensions.Limits{TimeoutMS: 1500})
	start := time.Now()
	r := f.call(t, "sleep", map[string]any{"ms": 60_000})
	if d := time.Since(start); d > 8*time.Second {
		t.Fatalf("a sleeping guest held the call for %s", d)
	}
	if !r.IsError || !strings.Contains(r.Text(), "timed out after 1.5s") {
		t.Fatalf("sleep result = %q", r.Text())
	}
	if r := f.call(t, "sleep", map[string]any{"ms": 10}); r.IsError || !strings.HasPrefix(r.Text(), "slept ") {
		t.Fatalf("short sleep = %+v", r)
	}
}

func TestSandboxEmitCancelled(t *testing.T) {
	f := newSandbox(t, extensions.Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n int
	r := tool.Run(ctx, f.ts, nil, "emit", "c", []byte(`{"n":1000,"ms":1}`), func(p tool.Result) {
		n++
		if n == 3 {
			cancel()
		}
	})
	// Either the guest saw emit return 1 and answered, or the host ended the
	// cancelled call: both end the call right after the third update.
	if n != 3 || !r.IsError && !strings.Contains(r.Text(), "emit returned 1 after 2") {
		t.Fatalf("after cancel: %d updates, result %+v", n, r)
	}
	if f.ext.Disabled() {
		t.Fatal("cancellation disabled the extension")
	}
	if r := f.call(t, "emit", map[string]any{"n": 2}); r.Text() != "emitted 2" {
		t.Fatalf("emit after cancel = %+v", r)
	}
}

func TestEventOnlyToDeclaringExtensions(t *testing.T) {
	f := newSandbox(t, extensions.Limits{})
	// The sandbox guest declares no hooks and answers any other method with
	// an error; an event sent to it would be logged as "event failed".
	f.host.Event(context.Background(), map[string]any{"type": "agent_start"})
	if strings.Contains(f.logs.String(), "event failed") {
		t.Fatalf("an event was sent to an extension without the event hook:\n%s", f.logs.String())
	}
	if hk := f.host.Hooks(); len(hk.ToolCall)+len(hk.ToolResult) != 0 {
		t.Fatalf("hooks = %+v", hk)
	}
}

// TestSandboxExecTimeoutKillsTheGroup: an exec that outlives its timeoutMs
// is an error answer, and the processes it started are killed with it.
func TestSandboxExecTimeoutKillsTheGroup(t *testing.T) {
	f := newSandbox(t, extensions.Limits{})
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	r := f.call(t, "exec", map[string]any{"argv": []string{"sh", "-c", "sleep 60 & echo $! > " + pidFile + "; wait"}, "ms": 300, "cwd": f.rw})
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("exec held the call for %s", d)
	}
	if !r.IsError || !strings.Contains(r.Text(), "exec sh: context deadline exceeded") {
		t.Fatalf("result = %+v", r)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, 5*time.Second) // the grandchild was killed with the call
	if r := f.call(t, "echo", map[string]any{}); r.IsError {
		t.Fatalf("echo after = %+v", r)
	}
}
