package extensions_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
)

// The fault messages of issue 13 item 6: each names what went wrong and how
// to fix it, through the real host and real guests.

// TestFaultQuotesGuestPanic: a Go guest that panics traps with only
// "wasm error: unreachable"; the fault message adds its panic line from
// stderr, for a panic in the calling goroutine and in another one.
func TestFaultQuotesGuestPanic(t *testing.T) {
	f := newSandbox(t, extensions.Limits{})
	for tool, want := range map[string]string{
		"panic":   "(guest stderr: panic: guest panic on purpose)",
		"gopanic": "(guest stderr: panic: assignment to entry in nil map)",
	} {
		r := f.call(t, tool, map[string]any{})
		if !r.IsError || !strings.Contains(r.Text(), want) || !strings.Contains(r.Text(), "tool.execute failed") {
			t.Errorf("%s: result %q lacks %q", tool, r.Text(), want)
		}
		if strings.Contains(r.Text(), "\n") {
			t.Errorf("%s: message has more than one line: %q", tool, r.Text())
		}
		// The next call starts fresh and does not carry the old panic line.
		if r := f.call(t, "garbage", map[string]any{"n": 1}); strings.Contains(r.Text(), "panic") {
			t.Errorf("%s: a later fault quotes the old panic: %q", tool, r.Text())
		}
		if r := f.call(t, "echo", map[string]any{}); r.IsError {
			t.Fatalf("echo after the faults = %q", r.Text())
		}
	}
}

// TestCommandModuleRefused: a module built as a WASI command (without
// -buildmode=c-shared) is refused at load with the rebuild line, both a
// real Go guest and a hand-written one.
func TestCommandModuleRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cmd.wasm")
	cmd := exec.Command("go", "build", "-o", out, "./"+sandboxGuest)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the sandbox guest as a command: %v\n%s", err, b)
	}
	for _, path := range []string{out, wat(t, "command")} {
		h := newHost(t, extensions.Options{})
		_, err := h.Load(t.Context(), extensions.Spec{Path: path})
		if err == nil || !strings.Contains(err.Error(), "exports _start and no _initialize") || !strings.Contains(err.Error(), "rebuild it with -buildmode=c-shared") {
			t.Errorf("load %s: err = %v, want the c-shared rebuild hint", filepath.Base(path), err)
		}
		if err != nil && strings.Contains(err.Error(), "_start first") {
			t.Errorf("load %s: still the old message: %v", filepath.Base(path), err)
		}
	}
}

// TestFaultHints: out of memory names memory_mb, a refused exec names
// --grant exec=, a refused path is logged at warn with the grants, a
// malformed answer is quoted (at most 200 bytes of it).
func TestFaultHints(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		h := newHost(t, extensions.Options{})
		e := load(t, h, extensions.Spec{Name: "membomb", Path: wat(t, "membomb"), Limits: extensions.Limits{MemoryMB: 4}})
		r := run(t.Context(), tools(t, e), nil, "bad", `{}`)
		if !r.IsError || !strings.Contains(r.Text(), "of 4 MiB in use; raise [extensions.limits] memory_mb") {
			t.Fatalf("out of memory = %q", r.Text())
		}
	})
	f := newSandbox(t, extensions.Limits{})
	t.Run("exec", func(t *testing.T) {
		r := f.call(t, "exec", map[string]any{"argv": []string{"git", "status"}, "cwd": "src"})
		if !r.IsError || !strings.Contains(r.Text(), "may not exec") || !strings.Contains(r.Text(), "grant it at install with --grant exec=git") {
			t.Fatalf("exec denied = %q", r.Text())
		}
	})
	t.Run("path", func(t *testing.T) {
		r := f.call(t, "read", map[string]string{"path": f.secret})
		if !r.IsError {
			t.Fatalf("read outside the grants = %q", r.Text())
		}
		want := "[WARN]  pi.ext.sandbox: extension sandbox: path " + f.secret + " is outside its grants (grants.fs: ro:" + f.ro + ", rw:" + f.rw + "); to allow it, grant a folder holding it: --grant fs=ro:PATH"
		if !strings.Contains(f.logs.String(), want) {
			t.Fatalf("logs lack %q:\n%s", want, f.logs.String())
		}
	})
	t.Run("malformed", func(t *testing.T) {
		for _, c := range []struct {
			n    int
			want string
		}{
			{1, `the answer began "<garbage>"`},
			{100, `the answer began "` + strings.Repeat("<garbage>", 22) + `<g" (first 200 of 900 bytes)`},
		} {
			r := f.call(t, "garbage", map[string]any{"n": c.n})
			if !r.IsError || !strings.Contains(r.Text(), "malformed response") || !strings.Contains(r.Text(), c.want) {
				t.Errorf("garbage n=%d = %q, want %q", c.n, r.Text(), c.want)
			}
		}
		f.call(t, "echo", map[string]any{}) // not three faults in a row
		r := f.call(t, "wrongshape", map[string]any{})
		if want := `; the result began "{\"content\":5}"`; !r.IsError || !strings.Contains(r.Text(), want) {
			t.Errorf("wrongshape = %q, want %q", r.Text(), want)
		}
	})
}

var spamLine = regexp.MustCompile(`(?m)sandbox: (stderr|log) \d+ `)

// TestGuestLogLimit: a call logs at most 1000 lines (stderr and pi.log
// together) and 1 MiB, then one "… N lines dropped"; the next call has a
// fresh budget.
func TestGuestLogLimit(t *testing.T) {
	f := newSandbox(t, extensions.Limits{})
	if r := f.call(t, "spam", map[string]any{"n": 3000}); r.IsError {
		t.Fatalf("spam = %q", r.Text())
	}
	logs := f.logs.String()
	if got := len(spamLine.FindAllString(logs, -1)); got != extensions.MaxLogLinesPerCall {
		t.Errorf("logged %d guest lines, want %d", got, extensions.MaxLogLinesPerCall)
	}
	if !strings.Contains(logs, "… 5000 lines dropped (a call may log 1000 lines and 1024 KiB)") {
		t.Errorf("no dropped-lines line:\n%s", logs[max(0, len(logs)-2000):])
	}

	// The size cap: 600 lines of 4 KiB each is 2.4 MiB.
	g := newSandbox(t, extensions.Limits{})
	if r := g.call(t, "spam", map[string]any{"n": 300, "text": strings.Repeat("y", 4096)}); r.IsError {
		t.Fatalf("spam = %q", r.Text())
	}
	logs = g.logs.String()
	got := len(spamLine.FindAllString(logs, -1))
	if got == 0 || got*4096 > extensions.MaxLogBytesPerCall {
		t.Errorf("logged %d lines of 4 KiB, over the %d-byte cap", got, extensions.MaxLogBytesPerCall)
	}
	if !strings.Contains(logs, "lines dropped") {
		t.Errorf("the size cap dropped nothing")
	}

	// A fresh budget on the next call.
	before := len(spamLine.FindAllString(f.logs.String(), -1))
	f.call(t, "spam", map[string]any{"n": 2})
	if after := len(spamLine.FindAllString(f.logs.String(), -1)); after != before+4 {
		t.Errorf("the next call logged %d lines, want 4", after-before)
	}
}
