package extensions_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
)

// TestABIDocExample assembles the WAT module printed in docs/abi.md and runs
// its tool and hook, so the page's example stays correct.
func TestABIDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "abi.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```wat\n")
	src, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/abi.md has no ```wat block")
	}
	wat(t, "good") // fails with the install hint when wat2wasm is missing
	dir := t.TempDir()
	in, out := filepath.Join(dir, "greet.wat"), filepath.Join(dir, "greet.wasm")
	os.WriteFile(in, []byte(src), 0o644)
	if b, err := exec.Command("wat2wasm", in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, b)
	}
	var logs logBuffer
	h := newHost(t, extensions.Options{Logger: newLogger(&logs)})
	e := load(t, h, extensions.Spec{Name: "greet", Path: out})
	ts := tools(t, e)
	ctx := context.Background()
	if r := run(ctx, ts, h.Hooks(), "greet", `{}`); r.IsError || r.Text() != "Hello from WAT!" {
		t.Fatalf("greet = %+v", r)
	}
	if !strings.Contains(logs.String(), "ext.greet: greeting") {
		t.Fatalf("log line missing:\n%s", logs.String())
	}
	if r := run(ctx, ts, h.Hooks(), "greet", `{"cmd":"rm -rf /"}`); !r.IsError || r.Text() != "rm -rf is not allowed" {
		t.Fatalf("blocked greet = %+v", r)
	}
}
