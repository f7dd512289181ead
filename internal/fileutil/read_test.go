package fileutil

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
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
