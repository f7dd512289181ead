package builtin

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestWithFileLockSerializesOneFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.txt")
	mustWrite(t, target, "")
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink("f.txt", link); err != nil {
		t.Fatal(err)
	}
	// The same file under three names: plain, through a symlink, unclean.
	names := []string{target, link, filepath.Join(dir, "sub", "..", "f.txt")}
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := WithFileLock(names[i%len(names)], func() error {
				n := inside.Add(1)
				for {
					m := maxInside.Load()
					if n <= m || maxInside.CompareAndSwap(m, n) {
						break
					}
				}
				// Hold the lock a moment, so that a second holder, if the
				// lock let one in, is counted. Not an ordering of events.
				time.Sleep(time.Millisecond)
				inside.Add(-1)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if maxInside.Load() != 1 {
		t.Errorf("%d holders at once, want 1", maxInside.Load())
	}
	if n := fileLockCount(); n != 0 {
		t.Errorf("%d lock entries left after all released", n)
	}
}

func TestWithFileLockDifferentFilesRunTogether(t *testing.T) {
	dir := t.TempDir()
	entered := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- WithFileLock(filepath.Join(dir, "a"), func() error {
			close(entered)
			<-release
			return nil
		})
	}()
	<-entered
	// b must not wait for a: this returns while a is still held.
	if err := WithFileLock(filepath.Join(dir, "b"), func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := fileLockCount(); n != 0 {
		t.Errorf("%d lock entries left", n)
	}
}

func TestWithFileLockReturnsFnError(t *testing.T) {
	want := os.ErrClosed
	if err := WithFileLock(filepath.Join(t.TempDir(), "x"), func() error { return want }); err != want {
		t.Errorf("got %v, want %v", err, want)
	}
	if n := fileLockCount(); n != 0 {
		t.Errorf("%d lock entries left", n)
	}
}

func TestRealPath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "real", "f"), "")
	if err := os.Symlink("real", filepath.Join(dir, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real/new", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{filepath.Join(dir, "real", "f"), filepath.Join(dir, "real", "f")},
		{filepath.Join(dir, "dirlink", "f"), filepath.Join(dir, "real", "f")},
		{filepath.Join(dir, "dirlink", "missing"), filepath.Join(dir, "real", "missing")},
		{filepath.Join(dir, "dangling"), filepath.Join(dir, "real", "new")},
		{filepath.Join(dir, "no", "such", "dir", "f"), filepath.Join(dir, "no", "such", "dir", "f")},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.in), func(t *testing.T) {
			if got := RealPath(tt.in); got != tt.want {
				t.Errorf("RealPath(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
