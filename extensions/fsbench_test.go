package extensions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
)

// BenchmarkGuestFileRead: one tool call of the Go sandbox guest that opens
// and reads a 4 KiB file two folders deep in a read-only grant (os.ReadFile:
// open, fstat, read, close), through the whole host: the cost of a guest
// file read through the mount layer.
func BenchmarkGuestFileRead(b *testing.B) {
	root := b.TempDir()
	p := filepath.Join(root, "src", "a", "b", "f.txt")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat("x", 4096)), 0o644); err != nil {
		b.Fatal(err)
	}
	h := newHost(b, extensions.Options{ProjectRoot: root, Cwd: root})
	e := load(b, h, extensions.Spec{Path: goGuest(b, sandboxGuest), Grants: extensions.Grants{FS: []string{"ro:src"}}})
	ts := tools(b, e)
	real, _ := filepath.EvalSymlinks(p)
	input := `{"path":"` + real + `"}`
	for b.Loop() {
		if r := run(context.Background(), ts, nil, "read", input); r.IsError || len(r.Text()) != 4096 {
			b.Fatalf("read = %+v", r)
		}
	}
}
