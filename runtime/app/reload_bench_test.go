package app

import (
	"context"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
)

// pi.reload measured: reading pi.toml, loading every extension again (the
// compilation cache warm, as after the first start), building the new
// tool set and swapping it in, the old set closed. Beside it, the start
// of the same runtime (Open), which a restart would cost instead.
//
//	go test ./runtime/app -run '^$' -bench 'Reload|OpenOne' -benchtime 30x

func BenchmarkReloadGo(b *testing.B) {
	rt := benchRuntime(b, "run12", plugin.BuildGo(b, "extensions/testdata/guests/run12"), "")
	ctx := context.Background()
	for b.Loop() {
		if err := rt.Reload(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	if len(rt.Extensions()) != 1 {
		b.Fatalf("extensions after reload: %v", rt.Extensions())
	}
}

func BenchmarkOpenOneGo(b *testing.B) {
	rt := benchRuntime(b, "run12", plugin.BuildGo(b, "extensions/testdata/guests/run12"), "")
	opts := rt.opts
	for b.Loop() {
		r, err := Open(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

// BenchmarkReloadAndCallGo is a reload and the first tool call after it,
// which starts the fresh instance (pinned extensions load lazily).
func BenchmarkReloadAndCallGo(b *testing.B) {
	rt := benchRuntime(b, "run12", plugin.BuildGo(b, "extensions/testdata/guests/run12"), "")
	ctx := context.Background()
	for b.Loop() {
		if err := rt.Reload(ctx, nil); err != nil {
			b.Fatal(err)
		}
		res, err := rt.CallTool(ctx, "count", "c", []byte(`{}`), nil)
		if err != nil || res.Text() != "1" {
			b.Fatalf("count after reload = %+v, %v", res, err)
		}
	}
}
