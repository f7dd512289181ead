package extensions_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

// TestSoak runs thousands of calls across extensions in parallel with
// injected faults (traps, timeouts, malformed, out-of-bounds and wrong-shaped
// answers, hook traps). Every call must be answered with the right result,
// no extension may end up disabled (each faulting worker follows a fault
// with answered calls), host memory must stay bounded and no goroutine may
// leak.
func TestSoak(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rounds := 400
	if testing.Short() {
		rounds = 80
	}
	ctx := context.Background()
	h, err := extensions.NewHost(ctx, extensions.Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	good := load(t, h, extensions.Spec{Path: wat(t, "good")})
	chaos := load(t, h, extensions.Spec{Path: wat(t, "chaos"), Limits: extensions.Limits{TimeoutMS: 250}})
	trap := load(t, h, extensions.Spec{Path: wat(t, "trap")})
	badjson := load(t, h, extensions.Spec{Path: wat(t, "badjson"), Limits: extensions.Limits{MemoryMB: 1}})
	oob := load(t, h, extensions.Spec{Path: wat(t, "oob")})

	goodTools := tools(t, good)
	goodHooks := &tool.Hooks{}
	for _, hk := range h.Hooks().ToolCall {
		if hk.Name == "extension good" {
			goodHooks.ToolCall = append(goodHooks.ToolCall, hk)
		}
	}
	chaosHooks := &tool.Hooks{}
	for _, hk := range h.Hooks().ToolCall {
		if hk.Name == "extension chaos" {
			chaosHooks.ToolCall = append(chaosHooks.ToolCall, hk)
		}
	}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	var calls, faults atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	report := func(format string, args ...any) {
		select {
		case errs <- fmt.Sprintf(format, args...):
		default:
		}
	}
	check := func(r tool.Result, wantErr bool, want string) {
		calls.Add(1)
		if r.IsError != wantErr || !strings.Contains(r.Text(), want) {
			report("result %+v, want isError=%v and %q", r, wantErr, want)
		}
		if wantErr {
			faults.Add(1)
		}
	}

	// Well-behaved traffic: 3 workers on good, with its tool_call hook.
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds*2; i++ {
				check(run(ctx, goodTools, goodHooks, "hello", `{"name":"soak"}`), false, "hello from wat")
				if i%10 == 0 {
					check(run(ctx, goodTools, goodHooks, "hello", `{"name":"BLOCKME"}`), true, "blocked by good")
					faults.Add(-1) // a block is an answer, not a fault
				}
			}
		}()
	}
	// One worker per faulting extension: bad, ok, ok, ...
	for _, e := range []*extensions.Extension{trap, badjson, oob} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts := tools(t, e)
			for i := 0; i < rounds/2; i++ {
				check(run(ctx, ts, nil, "bad", `{}`), true, "extension "+e.Name()+": tool.execute failed")
				check(run(ctx, ts, nil, "ok", `{}`), false, "ok")
			}
		}()
	}
	// chaos: a random kind of fault, in a tool or in its tool_call hook.
	wg.Add(1)
	go func() {
		defer wg.Done()
		ts := tools(t, chaos)
		kinds := []string{"trap", "loop", "badjson", "oob", "garbage", "wrongshape", "hook"}
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < rounds/2; i++ {
			switch k := kinds[rng.IntN(len(kinds))]; k {
			case "hook":
				check(run(ctx, ts, chaosHooks, "ok", `{"x":"HOOKTRAP"}`), true, "Tool execution was blocked: extension chaos failed")
			default:
				check(run(ctx, ts, chaosHooks, k, `{}`), true, "extension chaos: tool.execute failed")
			}
			check(run(ctx, ts, chaosHooks, "ok", `{}`), false, "ok")
		}
	}()

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		t.Fatal("soak did not finish: a call hung")
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for _, e := range h.Extensions() {
		if e.Disabled() {
			t.Errorf("extension %s was disabled", e.Name())
		}
	}

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d calls, %d faults; heap %d -> %d KiB", calls.Load(), faults.Load(), before.HeapAlloc>>10, after.HeapAlloc>>10)
	want := 3*(rounds*2+(rounds*2+9)/10) + 3*(rounds/2)*2 + (rounds/2)*2
	if got := calls.Load(); got != int64(want) {
		t.Errorf("%d calls answered, want %d", got, want)
	}
	if growth > 64<<20 {
		t.Errorf("heap grew by %d MiB over the soak", growth>>20)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
