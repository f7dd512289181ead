package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

// TestSpecialFiles: a FIFO is refused by all three tools without blocking
// and without being replaced.
func TestSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	tests := []struct {
		tool string
		args any
		want string
	}{
		{"read", map[string]any{"path": "pipe"}, "Cannot read " + fifo + ": it is a named pipe, not a regular file."},
		{"edit", map[string]any{"path": "pipe", "edits": edits("a", "b")}, "Could not edit file: pipe. It is not a regular file."},
		{"write", map[string]any{"path": "pipe", "content": "x"}, "write file " + fifo + ": named pipe, not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			r := callTool(t, dir, tt.tool, tt.args)
			if !r.IsError || r.Text() != tt.want {
				t.Errorf("got %q (isError %v), want %q", r.Text(), r.IsError, tt.want)
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the FIFO was replaced: %v %v", fi, err)
			}
		})
	}
}

// TestCancelledCalls: a call whose context is already cancelled changes
// nothing and says so.
func TestCancelledCalls(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "f.txt"), "a\nb\n")
	before := dirSnapshot(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tools := fileTools(t, dir)
	for name, args := range map[string]any{
		"read":  map[string]any{"path": "f.txt"},
		"write": map[string]any{"path": "f.txt", "content": "new"},
		"edit":  map[string]any{"path": "f.txt", "edits": edits("a", "A")},
	} {
		raw, _ := json.Marshal(args)
		r := tool.Run(ctx, tools, nil, name, "c", raw, nil)
		if !r.IsError || r.Text() != "Operation aborted" {
			t.Errorf("%s: got %q", name, r.Text())
		}
	}
	if after := dirSnapshot(t, dir); !mapsEqual(before, after) {
		t.Errorf("disk changed")
	}
}

// TestWriteKeepsOwner: when allowed (as root), an overwritten or edited file
// keeps its owner and group.
func TestWriteKeepsOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	mustWrite(t, path, "a\n")
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Skipf("chown: %v", err)
	}
	for _, call := range []struct {
		tool string
		args any
	}{
		{"write", map[string]any{"path": "f.txt", "content": "b\n"}},
		{"edit", map[string]any{"path": "f.txt", "edits": edits("b", "c")}},
	} {
		if r := callTool(t, dir, call.tool, call.args); r.IsError {
			t.Fatalf("%s: %s", call.tool, r.Text())
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != 65534 || st.Gid != 65534 {
			t.Errorf("after %s: owner %d:%d, want 65534:65534", call.tool, st.Uid, st.Gid)
		}
	}
	if got := mustRead(t, path); got != "c\n" {
		t.Errorf("content %q", got)
	}
}
