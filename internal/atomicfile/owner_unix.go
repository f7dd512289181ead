//go:build unix

package atomicfile

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// keepOwner gives f the owner and group of the file existing describes,
// where permitted; a failure is ignored (f stays ours).
func keepOwner(f *os.File, existing os.FileInfo) {
	if st, ok := existing.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}

// canWrite asks access(2) whether this process may write path.
func canWrite(path string) error { return unix.Access(path, unix.W_OK) }
