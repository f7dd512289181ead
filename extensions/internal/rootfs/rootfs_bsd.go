//go:build darwin || freebsd || openbsd || netbsd

package rootfs

import (
	"golang.org/x/sys/unix"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

const (
	// There is no O_PATH here: directories are opened for reading.
	rootOpenFlags = unix.O_RDONLY
	dirOpenFlags  = unix.O_RDONLY
	statOpenFlags = unix.O_RDONLY
	oRSYNC        = 0
	oDSYNC        = 0 // not in x/sys everywhere; O_SYNC still works
)

// beneath always leaves the lookup to the component walk: there is no
// openat2 outside Linux.
func (m *FS) beneath(string, int, uint32) (int, error) {
	return -1, errUseWalk
}

// fdatasync syncs a file (data and metadata: no fdatasync everywhere).
func fdatasync(fd int) error { return unix.Fsync(fd) }

// futimens answers ENOSYS, so wazero falls back to setting the times by
// path, through the mount (Utimens), which looks the path up beneath it.
func futimens(int, int64, int64) experimentalsys.Errno {
	return experimentalsys.ENOSYS
}
