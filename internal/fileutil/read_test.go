package fileutil

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadAtMost reads files shorter than, as long as and longer than the
// bound, with buffers too small and large enough: the data read plus the
// rest from the returned file is always the whole file, and a file at or
// under the bound comes back whole with no rest.
func TestReadAtMost(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 100, 4096, 4097, 300_000} {
		content := bytes.Repeat([]byte("0123456789abcdef\n"), size/17+1)[:size]
		name := filepath.Join(dir, "f")
		if err := os.WriteFile(name, content, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, max := range []int64{0, 100, 4096, 1 << 20} {
			for _, bufCap := range []int{0, 7, 64 << 10} {
				data, rest, err := ReadAtMost(name, make([]byte, 0, bufCap), max)
				if err != nil {
					t.Fatalf("size %d max %d: %v", size, max, err)
				}
				whole := append([]byte(nil), data...)
				if rest != nil {
					if int64(len(data)) <= max {
						t.Errorf("size %d max %d: a rest after only %d bytes", size, max, len(data))
					}
					more, err := io.ReadAll(rest)
					rest.Close()
					if err != nil {
						t.Fatal(err)
					}
					whole = append(whole, more...)
				} else if int64(size) > max && size > 0 && int64(len(data)) <= max {
					t.Errorf("size %d max %d: no rest, %d bytes", size, max, len(data))
				}
				if !bytes.Equal(whole, content) {
					t.Errorf("size %d max %d buf %d: read %d bytes, want the file's %d", size, max, bufCap, len(whole), size)
				}
			}
		}
	}
}

// TestReadAtMostErrors: a missing file and a directory are errors, with no
// rest left open.
func TestReadAtMostErrors(t *testing.T) {
	dir := t.TempDir()
	if _, rest, err := ReadAtMost(filepath.Join(dir, "missing"), nil, 10); !errors.Is(err, os.ErrNotExist) || rest != nil {
		t.Errorf("missing file: rest %v, err %v", rest, err)
	}
	if _, rest, err := ReadAtMost(dir, nil, 10); err == nil || rest != nil {
		t.Errorf("directory: rest %v, err %v", rest, err)
	}
}

// TestReadWhole: a file within max is read whole whatever the buffer; a
// larger one is reported big and not read; skip sees exactly the first
// head bytes (all of a shorter file) and, when it says so, the rest is
// not read.
func TestReadWhole(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 100, 4096, 4097, 300_000} {
		content := bytes.Repeat([]byte("0123456789abcdef\n"), size/17+1)[:size]
		name := filepath.Join(dir, "f")
		if err := os.WriteFile(name, content, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, max := range []int64{0, 100, 4096, 1 << 20} {
			for _, head := range []int{1, 64, 4096, 1 << 20} {
				for _, bufCap := range []int{0, 7, 64 << 10} {
					var saw []byte
					calls := 0
					data, big, skipped, err := ReadWhole(name, make([]byte, 0, bufCap), max, head, func(b []byte) bool {
						calls++
						saw = append([]byte(nil), b...)
						return false
					})
					if err != nil {
						t.Fatal(err)
					}
					if int64(size) > max {
						if !big || data != nil {
							t.Errorf("size %d max %d: big %v, %d bytes", size, max, big, len(data))
						}
						continue
					}
					if big || skipped || !bytes.Equal(data, content) {
						t.Errorf("size %d max %d head %d buf %d: big %v skipped %v, %d bytes", size, max, head, bufCap, big, skipped, len(data))
					}
					if calls != 1 || !bytes.Equal(saw, content[:min(size, head)]) {
						t.Errorf("size %d head %d: skip called %d times with %d bytes, want once with %d", size, head, calls, len(saw), min(size, head))
					}
					_, _, skipped, _ = ReadWhole(name, nil, max, head, func([]byte) bool { return true })
					if !skipped {
						t.Errorf("size %d: skip said yes, not skipped", size)
					}
				}
			}
		}
	}
	if _, _, _, err := ReadWhole(filepath.Join(dir, "missing"), nil, 10, 10, func([]byte) bool { return false }); err == nil {
		t.Error("no error for a missing file")
	}
}

// TestReadString: a file is read whole; a named pipe (a file swapped for
// one after a check) is refused at once instead of blocking the read, and
// so is a directory.
func TestReadString(t *testing.T) {
	dir := t.TempDir()
	content := strings.Repeat("0123456789abcdef\n", 20000)
	name := filepath.Join(dir, "f")
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadString(name)
	if err != nil || got != content {
		t.Fatalf("read %d bytes (%v), want %d", len(got), err, len(content))
	}
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadString(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a named pipe was read")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadString blocked on a named pipe")
	}
	if _, err := ReadString(dir); err == nil {
		t.Fatal("a directory was read")
	}
}
