package extensions

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

// assembleMirror assembles testdata/mirror.wat (this package's); a missing
// file fails the test.
func assembleMirror(t testing.TB) string {
	t.Helper()
	src := filepath.Join("testdata", "mirror.wat")
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("test module %s is missing: %v (the host's hand-written test modules live in extensions/testdata)", src, err)
	}
	bin, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatalf("wat2wasm not found: the tests assemble extensions/testdata/*.wat with it; install it with `apt-get install wabt` or run scripts/test")
	}
	out := filepath.Join(t.TempDir(), "mirror.wasm")
	if b, err := exec.Command(bin, src, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, b)
	}
	return out
}

// FuzzGuestAnswer plants arbitrary bytes in a real guest's memory and makes
// its pi_call answer them (or an arbitrary ptr/len) to a tool call and to
// each hook: the host must never panic, must answer every call, and must
// keep working (a fresh instance after each fault).
func FuzzGuestAnswer(f *testing.F) {
	ctx := context.Background()
	h, err := NewHost(ctx, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { h.Close(ctx) })
	e, err := h.Load(ctx, Spec{Path: assembleMirror(f)})
	if err != nil {
		f.Fatal(err)
	}
	execute := e.Definitions()[0].Execute
	hooks := h.Hooks()
	spawn := h.SpawnHooks()[0]

	for _, s := range []string{
		`{"ok":true,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"ok":true,"result":{}}`,
		`{"ok":false,"error":{"message":"no"}}`,
		`{"ok":true,"result":{"block":true,"reason":"r"}}`,
		`{"ok":true,"result":{"input":{"a":1},"command":"x"}}`,
		`{"ok":true,"result":{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"details":[1,2]}}`,
		`{"ok":tru`, ``,
	} {
		f.Add([]byte(s), uint32(0), uint32(0), false)
	}
	f.Add([]byte(`x`), uint32(0xffff_fff0), uint32(64), true)
	f.Add([]byte(`x`), uint32(0), uint32(MaxResponseBytes+1), true)

	const at = 0x10000 // page 1: clear of the init answer and the request buffer
	f.Fuzz(func(t *testing.T, answer []byte, ptr, n uint32, raw bool) {
		if len(answer) > 60000 {
			answer = answer[:60000]
		}
		if !raw {
			ptr, n = at, uint32(len(answer))
		}
		e.mu.Lock()
		e.faults = 0 // let the fuzz run past 3 faults
		e.disabled.Store(false)
		if e.inst == nil {
			if _, err := e.start(ctx); err != nil {
				e.mu.Unlock()
				t.Fatalf("fresh instance: %v", err)
			}
		}
		if !e.inst.mem.Write(at, answer) {
			e.mu.Unlock()
			t.Fatal("plant the answer")
		}
		if _, err := e.inst.mod.ExportedFunction("set_answer").Call(ctx, uint64(ptr), uint64(n)); err != nil {
			e.mu.Unlock()
			t.Fatal(err)
		}
		e.mu.Unlock()

		r, err := execute(ctx, tool.NewCall("c", json.RawMessage(`{}`), nil), tool.Context{})
		if err == nil && r.Content == nil {
			t.Fatalf("accepted a result without content: %+v", r)
		}
		info := tool.CallInfo{ID: "c", Name: "mirror", Input: json.RawMessage(`{}`)}
		if d, err := hooks.ToolCall[0].Func(ctx, info); err == nil && d.Input != nil && !json.Valid(d.Input) {
			t.Fatalf("accepted invalid replacement input %q", d.Input)
		}
		_, _ = hooks.ToolResult[0].Func(ctx, info, tool.TextResult("x"))
		_, _ = spawn.Func(ctx, tool.BashSpawn{Command: "ls", Cwd: "/"})
	})
}
