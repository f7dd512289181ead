//go:build !wasip1

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/tool"
)

// BenchmarkCall measures one tool call into a Go (sdk) guest through the real
// host: JSON envelope both ways, strict input decoding, result encoding, and
// with hooks one more guest call for the tool_call hook.
func BenchmarkCall(b *testing.B) {
	l := load(b, extensions.Spec{Grants: extensions.Grants{Exec: []string{"sh", "true"}, FS: []string{"ro:."}}})
	ctx := context.Background()
	run := func(b *testing.B, hooks *tool.Hooks, name, args string) {
		raw := json.RawMessage(args)
		b.ReportAllocs()
		for b.Loop() {
			if r := tool.Run(ctx, l.Tools, hooks, name, "c", raw, nil); r.IsError {
				b.Fatal(r.Text())
			}
		}
	}
	b.Run("execute", func(b *testing.B) { run(b, nil, "echo", `{"text":"hello"}`) })
	b.Run("execute+tool_call_hook", func(b *testing.B) { run(b, l.Hooks, "echo", `{"text":"hello"}`) })
	big, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", 50<<10)})
	b.Run("execute_50KB", func(b *testing.B) { run(b, nil, "echo", string(big)) })
	b.Run("exec_true", func(b *testing.B) { run(b, nil, "exec", `{"argv":["true"]}`) })
	b.Run("exec_200KB_host_take", func(b *testing.B) {
		run(b, nil, "exec", `{"argv":["sh","-c","head -c 200000 /dev/zero | tr '\\0' x"]}`)
	})
}

// BenchmarkLoad measures loading the sdkcheck module into a new host with
// the compilation cache warm (as on every pi start after the first): read and
// hash the file, instantiate, _initialize (Go runtime start and package
// inits), init; then close the host.
func BenchmarkLoad(b *testing.B) {
	wasm := plugin.BuildGo(b, "examples/plugins/internal/sdkcheck")
	sum, err := extensions.FileSHA256(wasm)
	if err != nil {
		b.Fatal(err)
	}
	cache, root := b.TempDir(), b.TempDir()
	ctx := context.Background()
	load := func() {
		h, err := extensions.NewHost(ctx, extensions.Options{CacheDir: cache, ProjectRoot: root, Cwd: root})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Load(ctx, extensions.Spec{Path: wasm, SHA256: sum}); err != nil {
			b.Fatal(err)
		}
		if err := h.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	load() // warm the cache
	for b.Loop() {
		load()
	}
}
