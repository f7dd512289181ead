package extensions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

// benchGuest is the Go guest the load benchmarks use: the loc example when
// it exists, else the sandbox test guest.
func benchGuest(b *testing.B) (path string, spec extensions.Spec) {
	b.Helper()
	dir := "examples/plugins/loc"
	if _, err := os.Stat(filepath.Join(repoRoot(b), dir)); err != nil {
		dir = sandboxGuest
	}
	path = goGuest(b, dir)
	return path, extensions.Spec{Path: path, Grants: extensions.Grants{FS: []string{"ro:."}}}
}

// BenchmarkLoadCold: verify, compile (empty cache), instantiate and init a
// Go guest, then close.
func BenchmarkLoadCold(b *testing.B) {
	_, spec := benchGuest(b)
	root := b.TempDir()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h, err := extensions.NewHost(ctx, extensions.Options{CacheDir: b.TempDir(), ProjectRoot: root, Cwd: root})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Load(ctx, spec); err != nil {
			b.Fatal(err)
		}
		h.Close(ctx)
	}
}

// BenchmarkLoadWarm: the same with the compilation cache already filled —
// what every pi start after the first pays per extension.
func BenchmarkLoadWarm(b *testing.B) {
	_, spec := benchGuest(b)
	benchLoadWarm(b, spec)
}

// BenchmarkLoadWarmWAT: a warm load of the hand-written good.wat (3 KB): the
// host's fixed cost of a load, without a Go runtime to decode and start.
func BenchmarkLoadWarmWAT(b *testing.B) {
	benchLoadWarm(b, extensions.Spec{Path: wat(b, "good")})
}

func benchLoadWarm(b *testing.B, spec extensions.Spec) {
	root := b.TempDir()
	cache := b.TempDir()
	ctx := context.Background()
	warm := func() time.Duration {
		start := time.Now()
		h, err := extensions.NewHost(ctx, extensions.Options{CacheDir: cache, ProjectRoot: root, Cwd: root})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Load(ctx, spec); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		h.Close(ctx)
		return d
	}
	warm() // fill the cache
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ds = append(ds, warm())
	}
	reportPercentiles(b, ds)
}

// BenchmarkLoadWarmProcess: a warm load as a fresh pi process sees it: each
// op runs this test binary as a child that creates a Host on the shared
// cache directory and loads the guest (the compiled code comes from disk,
// not from this process's memory); the child reports how long NewHost + Load
// took, which is what the p50/p99 metrics are made of (process start-up is
// excluded).
func BenchmarkLoadWarmProcess(b *testing.B) {
	path, _ := benchGuest(b)
	cache := b.TempDir()
	child := func() time.Duration {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLoadChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PI_EXT_LOAD_CHILD="+path, "PI_EXT_LOAD_CACHE="+cache)
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		_, after, ok := strings.Cut(string(out), "load-ns=")
		ns, err := strconv.ParseInt(strings.Fields(after + " ")[0], 10, 64)
		if !ok || err != nil {
			b.Fatalf("child output: %s", out)
		}
		return time.Duration(ns)
	}
	child() // fill the cache
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ds = append(ds, child())
	}
	reportPercentiles(b, ds)
}

// TestLoadChild is BenchmarkLoadWarmProcess's child; it does nothing in a
// normal test run.
func TestLoadChild(t *testing.T) {
	path := os.Getenv("PI_EXT_LOAD_CHILD")
	if path == "" {
		return
	}
	ctx := context.Background()
	root := t.TempDir()
	start := time.Now()
	h, err := extensions.NewHost(ctx, extensions.Options{CacheDir: os.Getenv("PI_EXT_LOAD_CACHE"), ProjectRoot: root, Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Load(ctx, extensions.Spec{Path: path, Grants: extensions.Grants{FS: []string{"ro:."}}}); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("load-ns=%d\n", time.Since(start).Nanoseconds())
	h.Close(ctx)
}

// reportPercentiles adds p50/p99 (of the timed part of each op) as metrics.
func reportPercentiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(ds[len(ds)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkToolCall: one trivial tool.execute round trip into a WAT guest
// that answers a constant (request encode, pi_alloc, pi_call, copy-out, two
// pi_free, decode), with the per-call deadline and close-on-context-done
// on: the host's own cost of a call.
func BenchmarkToolCall(b *testing.B) {
	h := newHost(b, extensions.Options{})
	e := load(b, h, extensions.Spec{Path: wat(b, "bench")})
	okDef := e.Definitions()[0]
	ctx := context.Background()
	call := tool.NewCall("c", json.RawMessage(`{}`), nil)
	ds := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, err := okDef.Execute(ctx, call, tool.Context{Cwd: "/"})
		ds = append(ds, time.Since(start))
		if err != nil || r.IsError || r.Content == nil {
			b.Fatal(err, r)
		}
	}
	reportPercentiles(b, ds)
}

// BenchmarkHookOverhead: a full pipeline call (tool.Run: validation,
// hooks, execute) of bench.wat's noop tool without hooks, with its tool_call
// hook, and with its tool_call + tool_result hooks; the differences are a
// hook's added latency per tool call.
func BenchmarkHookOverhead(b *testing.B) {
	h := newHost(b, extensions.Options{})
	g := load(b, h, extensions.Spec{Path: wat(b, "bench")})
	ts := tools(b, g)
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		hooks *tool.Hooks
	}{
		{"none", nil},
		{"tool_call", &tool.Hooks{ToolCall: h.Hooks().ToolCall}},
		{"tool_call+tool_result", h.Hooks()},
	} {
		b.Run(c.name, func(b *testing.B) {
			ds := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				r := tool.Run(ctx, ts, c.hooks, "noop", "c", json.RawMessage(`{}`), nil)
				ds = append(ds, time.Since(start))
				if r.IsError {
					b.Fatal(r)
				}
			}
			reportPercentiles(b, ds)
		})
	}
}
