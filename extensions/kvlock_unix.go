//go:build unix

package extensions

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f, waiting for it: the lock of a kv
// store's writers, in this and every other pi process (a flock belongs to
// the open file, so two opens in one process exclude each other too).
func lockFile(f *os.File) (unlock func(), err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}

// allocatedBlocks is the number of 512-byte blocks the file system
// allocated to the file (st_blocks), 0 when unknown.
func allocatedBlocks(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks)
	}
	return 0
}
