package hellowat

import (
	"os"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/app/pitest"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

func TestHello(t *testing.T) {
	// The public test kit, as an extension author's test would use it.
	l := pitest.Load(t, pitest.Extension{Path: pitest.BuildWAT(t, "hello.wat")})
	exts := l.Extensions()
	if len(exts) != 1 {
		t.Fatalf("extensions %+v", exts)
	}
	info := exts[0]
	if info.Name != "hello-wat" || info.Version != "0.1.0" || len(info.Tools) != 1 || info.Tools[0].Name != "hello" || len(info.Hooks) != 0 {
		t.Fatalf("info %+v", info)
	}
	tests := []struct {
		name    string
		args    any
		want    string
		isError bool
	}{
		{"plain", map[string]any{"name": "Ada"}, "Hello, Ada!", false},
		{"escapes are kept", map[string]any{"name": `say "hi" \ back`}, `Hello, say "hi" \ back!`, false},
		{"unicode", map[string]any{"name": "Zoë 世界"}, "Hello, Zoë 世界!", false},
		{"empty name", map[string]any{"name": ""}, "Hello, !", false},
		{"missing name is a validation error", map[string]any{}, `Validation failed for tool "hello"`, true},
		{"extra property is a validation error", map[string]any{"name": "a", "x": 1}, `Validation failed for tool "hello"`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := l.Call("hello", tc.args)
			if r.IsError != tc.isError || !strings.Contains(r.Text, tc.want) {
				t.Errorf("got %q (isError %v), want %q (isError %v)", r.Text, r.IsError, tc.want, tc.isError)
			}
			if !tc.isError && r.Text != tc.want {
				t.Errorf("got %q, want exactly %q", r.Text, tc.want)
			}
		})
	}
	t.Run("many calls reuse the heap", func(t *testing.T) {
		long := strings.Repeat("n", 100_000) // bigger than the module's first pages
		for range 50 {
			if r := l.Call("hello", map[string]any{"name": long}); r.Text != "Hello, "+long+"!" {
				t.Fatalf("got %d bytes", len(r.Text))
			}
		}
	})
	if !strings.Contains(l.Logs(), "hello-wat: init") {
		t.Errorf("the init log line did not reach the host logger:\n%s", l.Logs())
	}
}

// BenchmarkHello measures one tool call into the hand-written module through
// the real host: the floor under any guest, with no Go runtime in it.
func BenchmarkHello(b *testing.B) {
	// The extension host alone (internal/testkit/plugin), without the rest of
	// pi that pitest assembles around it.
	wasm := plugin.BuildWAT(b, "examples/plugins/hello-wat/hello.wat")
	l := plugin.Load(b, wasm, b.TempDir(), extensions.Spec{Name: "hello-wat"})
	b.ReportAllocs()
	for b.Loop() {
		if r := l.Run(b, "hello", map[string]any{"name": "hello"}); r.IsError {
			b.Fatal(r.Text())
		}
	}
}
