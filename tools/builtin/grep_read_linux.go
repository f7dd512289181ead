//go:build linux

package builtin

import (
	"syscall"

	"github.com/pi-go/pi/internal/fileutil"
)

// cwdFd, given to readWholeAt with a whole path as the name, opens that
// path (AT_FDCWD) without following a link in its last element.
const cwdFd = -0x64 // AT_FDCWD on every Linux architecture

// readWholeAt reads the file name of the directory open as dirfd (or, when
// dirfd is -1, the file dirAbs+name) whole into buf with
// fileutil.ReadWholeFd: big reports a file over max bytes (not read),
// skipped a file whose first head bytes skip rejects (the rest not read).
// It opens relative to the directory (one path component to resolve, not
// the whole path), never through a symbolic link (O_NOFOLLOW: the walk saw
// a file, so a link there was swapped in since): a small file costs
// openat, a read, the read that sees its end, and close.
//
// # Errors
//
// readWholeAt fails when the file cannot be opened, examined or read.
func readWholeAt(dirfd int, dirAbs, name string, buf []byte, max int64, head int, skip func([]byte) bool) (data []byte, big, skipped bool, err error) {
	if dirfd == -1 {
		return fileutil.ReadWhole(dirAbs+name, buf, max, head, skip)
	}
	var fd int
	for {
		fd, err = syscall.Openat(dirfd, name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, false, false, err
	}
	defer syscall.Close(fd)
	return fileutil.ReadWholeFd(fd, buf, max, head, skip)
}

// closeDir closes a directory descriptor of readWholeAt.
func closeDir(fd int) { syscall.Close(fd) }
