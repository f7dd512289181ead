package extensions_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

// lazyFixture is a pinned copy of hello-wat (which logs "hello-wat: init"
// from init, so an instantiation is observable) and a record folder.
type lazyFixture struct {
	wasm, sum, records string
}

func newLazyFixture(t *testing.T) lazyFixture {
	t.Helper()
	src := plugin.BuildWAT(t, "examples/plugins/hello-wat/hello.wat")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f := lazyFixture{wasm: filepath.Join(t.TempDir(), "hello.wasm"), records: t.TempDir()}
	if err := os.WriteFile(f.wasm, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if f.sum, err = extensions.FileSHA256(f.wasm); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f lazyFixture) host(t *testing.T, logs *logBuffer) *extensions.Host {
	return newHost(t, extensions.Options{DeclaredDir: f.records, Logger: newLogger(logs)})
}

func (f lazyFixture) spec(config map[string]any) extensions.Spec {
	return extensions.Spec{Name: "hello-wat", Path: f.wasm, SHA256: f.sum, Config: config}
}

// record returns the one record file.
func (f lazyFixture) record(t *testing.T) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(f.records, "*.json"))
	if len(m) != 1 {
		t.Fatalf("records: %v", m)
	}
	return m[0]
}

// TestLazyLoad: the first load is eager and leaves a record; a later load
// of the same file with the same request registers the tools from it
// without instantiating, and the first call starts the instance; another
// config is another record (an eager load).
func TestLazyLoad(t *testing.T) {
	f := newLazyFixture(t)
	var logs1 logBuffer
	e1 := load(t, f.host(t, &logs1), f.spec(nil))
	if strings.Count(logs1.String(), "hello-wat: init") != 1 {
		t.Fatalf("the first load did not run init:\n%s", logs1.String())
	}
	f.record(t)

	var logs2 logBuffer
	e2 := load(t, f.host(t, &logs2), f.spec(nil))
	if strings.Contains(logs2.String(), "hello-wat: init") {
		t.Fatalf("a load from the record instantiated the module:\n%s", logs2.String())
	}
	i1, i2 := e1.Info(), e2.Info()
	if i2.Name != "hello-wat" || i2.Version != i1.Version || len(i2.Tools) != 1 || i2.Tools[0].Name != "hello" || i2.SHA256 != f.sum {
		t.Fatalf("info from the record %+v, from init %+v", i2, i1)
	}
	if r := run(context.Background(), tools(t, e2), nil, "hello", `{"name":"Ada"}`); r.IsError || r.Text() != "Hello, Ada!" {
		t.Fatalf("first call = %+v", r)
	}
	if strings.Count(logs2.String(), "hello-wat: init") != 1 {
		t.Fatalf("the first call did not start the instance once:\n%s", logs2.String())
	}

	var logs3 logBuffer
	load(t, f.host(t, &logs3), f.spec(map[string]any{"x": 1}))
	if !strings.Contains(logs3.String(), "hello-wat: init") {
		t.Fatalf("another config loaded from the first record:\n%s", logs3.String())
	}
}

// TestLazyChangedFile: a file rewritten with other bytes of the same size,
// its mtime put back, loads eagerly (its identity changed) and is refused
// for its sha256; a record forged to the changed file's identity gets the
// extension registered, but its first call faults on the sha256 and names
// pi ext update.
func TestLazyChangedFile(t *testing.T) {
	f := newLazyFixture(t)
	load(t, f.host(t, &logBuffer{}), f.spec(nil))
	rec := f.record(t)

	fi, err := os.Stat(f.wasm)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f.wasm)
	i := strings.Index(string(b), "Hello, ")
	if i < 0 {
		t.Fatal("no greeting in the module")
	}
	b[i] = 'J' // "Jello, ": same size
	if err := os.WriteFile(f.wasm, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f.wasm, time.Time{}, fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.host(t, &logBuffer{}).Load(context.Background(), f.spec(nil)); !errors.Is(err, extensions.ErrSHA256Mismatch) {
		t.Fatalf("load of the changed file: %v, want a sha256 mismatch", err)
	}

	// Forge the record to the new identity: the check at the first call
	// still catches the bytes.
	var r map[string]json.RawMessage
	raw, _ := os.ReadFile(rec)
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	id, err := extensions.FileIdentity(f.wasm)
	if err != nil {
		t.Fatal(err)
	}
	r["file"], _ = json.Marshal(id)
	raw, _ = json.Marshal(r)
	if err := os.WriteFile(rec, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	e := load(t, f.host(t, &logBuffer{}), f.spec(nil))
	res := run(context.Background(), tools(t, e), nil, "hello", `{"name":"Ada"}`)
	if !res.IsError || !strings.Contains(res.Text(), "sha256 mismatch") || !strings.Contains(res.Text(), "pi ext update") || strings.Contains(res.Text(), "Jello") {
		t.Fatalf("first call of a changed module = %q", res.Text())
	}
}

// TestLazyRecordDisagrees: a record whose declaration differs from what
// init answers (here: a tool init does not declare) registers, but the
// first call faults, and the record is dropped so the next start is eager.
func TestLazyRecordDisagrees(t *testing.T) {
	f := newLazyFixture(t)
	load(t, f.host(t, &logBuffer{}), f.spec(nil))
	rec := f.record(t)
	raw, _ := os.ReadFile(rec)
	forged := strings.Replace(string(raw), `"tools":[`, `"tools":[{"name":"extra","description":"x","parameters":{"type":"object"}},`, 1)
	if forged == string(raw) {
		t.Fatalf("no tools list in the record: %s", raw)
	}
	if err := os.WriteFile(rec, []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	e := load(t, f.host(t, &logBuffer{}), f.spec(nil))
	if len(e.Info().Tools) != 2 {
		t.Fatalf("tools from the forged record: %+v", e.Info().Tools)
	}
	res := run(context.Background(), tools(t, e), nil, "hello", `{"name":"Ada"}`)
	if !res.IsError || !strings.Contains(res.Text(), "init answered differently from the record") {
		t.Fatalf("first call = %q", res.Text())
	}
	if _, err := os.Stat(rec); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the disagreeing record was kept: %v", err)
	}
}

// TestLazyHookFailsClosed: an extension with a tool_call hook registered
// from its record whose module bytes changed blocks every call its hook
// sees: the hook's first run reads the module, the sha256 check faults it,
// and a faulting tool_call hook blocks.
func TestLazyHookFailsClosed(t *testing.T) {
	b, err := os.ReadFile(wat(t, "good"))
	if err != nil {
		t.Fatal(err)
	}
	f := lazyFixture{wasm: filepath.Join(t.TempDir(), "good.wasm"), records: t.TempDir()}
	os.WriteFile(f.wasm, b, 0o644)
	f.sum, _ = extensions.FileSHA256(f.wasm)
	spec := extensions.Spec{Name: "good", Path: f.wasm, SHA256: f.sum, Grants: extensions.Grants{Exec: []string{"echo"}}}
	load(t, f.host(t, &logBuffer{}), spec)
	rec := f.record(t)

	i := strings.Index(string(b), "BLOCKME")
	b[i] = 'X' // the module changes; its size does not
	if err := os.WriteFile(f.wasm, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var r map[string]json.RawMessage
	raw, _ := os.ReadFile(rec)
	json.Unmarshal(raw, &r)
	id, _ := extensions.FileIdentity(f.wasm)
	r["file"], _ = json.Marshal(id)
	raw, _ = json.Marshal(r)
	os.WriteFile(rec, raw, 0o600)

	h := f.host(t, &logBuffer{})
	e := load(t, h, spec)
	if !slicesContains(e.Info().Hooks, "tool_call") {
		t.Fatalf("hooks from the record: %v", e.Info().Hooks)
	}
	for i := range 4 { // past MaxFaultsInARow: disabled stays blocked
		res := run(context.Background(), tools(t, e), h.Hooks(), "hello", `{"name":"x"}`)
		if !res.IsError || !strings.Contains(res.Text(), "tool_call") || strings.Contains(res.Text(), "Hello") || (i == 0 && !strings.Contains(res.Text(), "sha256 mismatch")) {
			t.Fatalf("a call through the hook of a changed module = %q", res.Text())
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
