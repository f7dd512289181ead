package extensions_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
)

// fdsTo counts this process's open file descriptors that refer to dir.
func fdsTo(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("list open fds: %v", err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == dir {
			n++
		}
	}
	return n
}

// TestMountDirsClosed: the directories an extension's fs grants opened are
// closed when the host closes and when a load fails at any step after they
// were opened, not when the garbage collector gets to them (the extension is
// kept reachable here, so a finalizer could not do it).
func TestMountDirsClosed(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src, out := filepath.Join(root, "src"), filepath.Join(root, "out")
	for _, d := range []string{src, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	notWasm := filepath.Join(root, "not.wasm")
	if err := os.WriteFile(notWasm, []byte("not a module"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := wat(t, "good")
	grants := extensions.Grants{FS: []string{"ro:src", "rw:out"}}
	ctx := context.Background()

	t.Run("host closed", func(t *testing.T) {
		h, err := extensions.NewHost(ctx, extensions.Options{CacheDir: cacheDir, ProjectRoot: root, Cwd: root})
		if err != nil {
			t.Fatal(err)
		}
		e := load(t, h, extensions.Spec{Path: good, Grants: grants})
		if n, m := fdsTo(t, src), fdsTo(t, out); n != 1 || m != 1 {
			t.Fatalf("while loaded: %d fds to src, %d to out; want 1 each", n, m)
		}
		if err := h.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if n, m := fdsTo(t, src), fdsTo(t, out); n != 0 || m != 0 {
			t.Errorf("after Close: %d fds to src, %d to out still open", n, m)
		}
		runtime.KeepAlive(e)
	})

	for _, tc := range []struct {
		name string
		spec extensions.Spec
		err  string
	}{
		{"a later grant fails", extensions.Spec{Path: good, Grants: extensions.Grants{FS: []string{"ro:src", "rw:out", "ro:missing"}}}, "missing"},
		{"a nested grant", extensions.Spec{Path: good, Grants: extensions.Grants{FS: []string{"ro:src", "rw:out", "ro:src"}}}, "src"},
		{"compile fails", extensions.Spec{Path: notWasm, Grants: grants}, "not a WebAssembly module"},
		{"init names another extension", extensions.Spec{Name: "other", Path: good, Grants: grants}, `configured as "other"`},
		{"the name is taken", extensions.Spec{Path: good, Grants: grants}, "already loaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, extensions.Options{ProjectRoot: root, Cwd: root})
			if tc.name == "the name is taken" {
				load(t, h, extensions.Spec{Path: good})
			}
			_, err := h.Load(ctx, tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Load = %v, want an error with %q", err, tc.err)
			}
			if n, m := fdsTo(t, src), fdsTo(t, out); n != 0 || m != 0 {
				t.Errorf("after the failed load: %d fds to src, %d to out still open", n, m)
			}
		})
	}
}
