package extensions_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
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

// TestABI11DocExample assembles the ABI 1.1 WAT module printed in
// docs/abi.md (its second ```wat block), checks it is the benchmarks'
// extensions/testdata/notes.wat, and runs its tool: kv.set, then kv.get,
// whose answer comes back as the result's details.
func TestABI11DocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "abi.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```wat\n")
	if len(blocks) < 3 {
		t.Fatal("docs/abi.md has no second ```wat block (the ABI 1.1 example)")
	}
	src, _, _ := strings.Cut(blocks[2], "```")
	file, err := os.ReadFile(filepath.Join(repoRoot(t), "extensions", "testdata", "notes.wat"))
	if err != nil {
		t.Fatal(err)
	}
	if src != string(file) {
		t.Fatal("the ABI 1.1 example in docs/abi.md differs from extensions/testdata/notes.wat")
	}
	wasm := wat(t, "notes")
	kv := filepath.Join(t.TempDir(), "kv")
	for run := range 2 { // a second host on the same kv folder: a restart
		h := newHost(t, extensions.Options{KVDir: kv})
		e := load(t, h, extensions.Spec{Name: "notes", Path: wasm})
		r := run11(t, tools(t, e), h.Hooks(), "remember")
		if r.IsError || r.Text() != "stored and read back" || string(r.Details.(json.RawMessage)) != `{"ok":true,"result":{"value":"hello from WAT"}}` {
			t.Fatalf("run %d: remember = %+v", run, r)
		}
		h.Close(context.Background())
	}
	// Loaded with no pi.toml entry: the store of the module's digest.
	sum, err := extensions.FileSHA256(wasm)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(kv, "project", "*", extensions.KVStoreID("", "notes", sum), "*.kv"))
	if len(files) != 1 {
		t.Errorf("the store holds %v, want one key", files)
	}
}

func run11(t *testing.T, ts []tool.AgentTool, hooks *tool.Hooks, name string) tool.Result {
	t.Helper()
	return run(context.Background(), ts, hooks, name, `{}`)
}
