package fileutil

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestWithLockSerializesOneFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
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
			err := WithLock(names[i%len(names)], func() error {
				n := inside.Add(1)
				for {
					m := maxInside.Load()
					if n <= m || maxInside.CompareAndSwap(m, n) {
						break
					}
				}
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
	if n := LockedFiles(); n != 0 {
		t.Errorf("%d lock entries left after all released", n)
	}
}

func TestWithLockDifferentFilesRunTogether(t *testing.T) {
	dir := t.TempDir()
	entered := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- WithLock(filepath.Join(dir, "a"), func() error {
			close(entered)
			<-release
			return nil
		})
	}()
	<-entered
	// b must not wait for a: this returns while a is still held.
	if err := WithLock(filepath.Join(dir, "b"), func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := LockedFiles(); n != 0 {
		t.Errorf("%d lock entries left", n)
	}
}

func TestWithLockReturnsFnError(t *testing.T) {
	want := os.ErrClosed
	if err := WithLock(filepath.Join(t.TempDir(), "x"), func() error { return want }); err != want {
		t.Errorf("got %v, want %v", err, want)
	}
	if n := LockedFiles(); n != 0 {
		t.Errorf("%d lock entries left", n)
	}
}
