package extensions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/tool"
)

// cacheDir is the compilation cache the tests share (plugin.CacheDir).
var cacheDir string

func TestMain(m *testing.M) {
	d, err := plugin.CacheDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cacheDir = d
	os.Exit(plugin.Main(m))
}

// repoRoot is the module root (…/extensions/..).
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// wat assembles extensions/testdata/NAME.wat with wat2wasm (once per run)
// and returns the .wasm path; a missing file fails the test.
func wat(t testing.TB, name string) string {
	t.Helper()
	return plugin.BuildWAT(t, watPath(name))
}

// watPath is where the test module NAME.wat lives, relative to the module
// root: next to this package.
func watPath(name string) string { return filepath.Join("extensions", "testdata", name+".wat") }

// goGuest builds a Go guest (a main package under DIR relative to the repo
// root) with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared, once per run.
func goGuest(t testing.TB, dir string) string {
	t.Helper()
	return plugin.BuildGo(t, dir)
}

// logBuffer is a concurrency-safe hclog sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newLogger(w *logBuffer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "pi", Output: w, Level: hclog.Trace, DisableTime: true})
}

// newHost returns a host with the shared cache, closed at the end of the test.
func newHost(t testing.TB, opts extensions.Options) *extensions.Host {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = cacheDir
	}
	h, err := extensions.NewHost(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func load(t testing.TB, h *extensions.Host, spec extensions.Spec) *extensions.Extension {
	t.Helper()
	e, err := h.Load(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// tools wraps an extension's definitions.
func tools(t testing.TB, e *extensions.Extension) []tool.AgentTool {
	t.Helper()
	ts, err := tool.WrapAll(e.Definitions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// run runs one tool call through the whole pipeline.
func run(ctx context.Context, ts []tool.AgentTool, hooks *tool.Hooks, name, input string) tool.Result {
	return tool.Run(ctx, ts, hooks, name, "call-1", json.RawMessage(input), nil)
}
