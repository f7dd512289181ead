package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
)

// The ABI 1.1 host methods, measured through the assembled runtime: one
// tool call of a guest tool that makes a kv.set and a kv.get (a kv round
// trip), or a tool.call of the built-in ls, from a WAT guest and from a Go
// guest built with the SDK. Each iteration is a whole CallTool: the
// pipeline, one tool.execute into the guest and its host calls.
//
//	go test ./runtime/app -run '^$' -bench ABI11 -benchtime 200x

func benchRuntime(b *testing.B, name, wasm, grants string) *Runtime {
	b.Helper()
	dir, home := b.TempDir(), b.TempDir()
	b.Setenv("PI_HOME", home)
	b.Setenv("OPENAI_API_KEY", "")
	for i := range 20 {
		write2(b, filepath.Join(dir, fmt.Sprintf("file%02d.txt", i)), "x")
	}
	toml := fmt.Sprintf("[[extensions]]\nname = %q\npath = %q\nsha256 = %q\n[extensions.grants]\n%s\n", name, wasm, shaB(b, wasm), grants)
	write2(b, filepath.Join(dir, "pi.toml"), toml)
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Trust: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rt.Close)
	return rt
}

func benchCall(b *testing.B, rt *Runtime, tool, want string) {
	b.Helper()
	ctx := context.Background()
	in := json.RawMessage(`{}`)
	for b.Loop() {
		res, err := rt.CallTool(ctx, tool, "c", in, nil)
		if err != nil || res.IsError || !strings.Contains(res.Text(), want) {
			b.Fatalf("%s = %+v, %v", tool, res, err)
		}
	}
}

func BenchmarkABI11KVRoundTripWAT(b *testing.B) {
	rt := benchRuntime(b, "notes", plugin.BuildWAT(b, "extensions/testdata/notes.wat"), "")
	benchCall(b, rt, "remember", "stored and read back")
}

func BenchmarkABI11KVRoundTripGo(b *testing.B) {
	rt := benchRuntime(b, "bench11", plugin.BuildGo(b, "extensions/testdata/guests/bench11"), "")
	benchCall(b, rt, "kvrt", "hello from Go")
}

func BenchmarkABI11ToolCallLsWAT(b *testing.B) {
	rt := benchRuntime(b, "callls", plugin.BuildWAT(b, "extensions/testdata/callls.wat"), `tools = ["ls"]`)
	benchCall(b, rt, "callls", "listed")
}

func BenchmarkABI11ToolCallLsGo(b *testing.B) {
	rt := benchRuntime(b, "bench11", plugin.BuildGo(b, "extensions/testdata/guests/bench11"), `tools = ["ls"]`)
	benchCall(b, rt, "gols", "listed")
}

func write2(tb testing.TB, path, data string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func shaB(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// BenchmarkABI11BaselineWAT is the same CallTool of a WAT tool that makes
// no host call (hello-wat), to subtract.
func BenchmarkABI11BaselineWAT(b *testing.B) {
	rt := benchRuntime(b, "hello-wat", plugin.BuildWAT(b, "examples/plugins/hello-wat/hello.wat"), "")
	ctx := context.Background()
	in := json.RawMessage(`{"name":"x"}`)
	for b.Loop() {
		if res, err := rt.CallTool(ctx, "hello", "c", in, nil); err != nil || res.IsError {
			b.Fatalf("hello = %+v, %v", res, err)
		}
	}
}
