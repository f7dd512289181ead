//go:build unix

package sandbox

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// hostCanWrite reports whether pi (outside the sandbox) could write path,
// or create it in its folder.
func hostCanWrite(path string) bool {
	if _, err := os.Lstat(path); err == nil {
		return unix.Access(path, unix.W_OK) == nil
	}
	return unix.Access(filepath.Dir(path), unix.W_OK) == nil
}
