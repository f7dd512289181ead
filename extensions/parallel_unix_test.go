//go:build unix

package extensions_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

// TestExtensionsRunInParallel: calls into two different extensions of one
// host overlap. Each call execs one end of a named pipe, and opening a FIFO
// blocks until its other end is opened: the reader's call can only finish
// once the writer's call has started, and the other way round. Were calls
// into different extensions serialized, the first would wait for the
// second until its deadline and fail with a timeout.
func TestExtensionsRunInParallel(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "rendezvous")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	h := newHost(t, extensions.Options{ProjectRoot: root, Cwd: root})
	spec := func(name string) extensions.Spec {
		return extensions.Spec{
			Name:   name,
			Path:   goGuest(t, sandboxGuest),
			Grants: extensions.Grants{FS: []string{"ro:."}, Exec: []string{"cat", "sh"}},
			Config: map[string]any{"name": name},
			Limits: extensions.Limits{TimeoutMS: 10_000},
		}
	}
	reader := tools(t, load(t, h, spec("reader")))
	writer := tools(t, load(t, h, spec("writer")))
	ctx := context.Background()
	read, wrote := make(chan tool.Result), make(chan tool.Result)
	go func() { read <- run(ctx, reader, nil, "exec", `{"argv":["cat",`+quote(fifo)+`]}`) }()
	go func() {
		wrote <- run(ctx, writer, nil, "exec", `{"argv":["sh","-c","echo met >\"$0\"",`+quote(fifo)+`]}`)
	}()
	r, w := <-read, <-wrote
	if r.IsError || !strings.Contains(r.Text(), `"stdout":"met\n"`) {
		t.Errorf("reader = %q, want the line the writer's call wrote (calls into different extensions must overlap)", r.Text())
	}
	if w.IsError || !strings.Contains(w.Text(), `"exitCode":0`) {
		t.Errorf("writer = %q, want exit code 0 (calls into different extensions must overlap)", w.Text())
	}
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
