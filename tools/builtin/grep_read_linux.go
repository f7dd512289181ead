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
// dirfd is -1, the file dirAbs+name) whole into buf, as fileutil.ReadWhole
// does: big reports a file over max bytes (not read), skipped a file whose
// first head bytes skip rejects (the rest not read). It opens relative to
// the directory (one path component to resolve, not the whole path),
// never through a symbolic link (O_NOFOLLOW: the walk saw a file, so a
// link there was swapped in since), and sizes nothing with fstat while
// the file fits the buffer: a small file
// costs openat, a read, the read that sees its end, and close. Only a file
// that fills the first head bytes is fstat-ed, to size the buffer once and
// to leave a file over max to the streaming search unread.
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
	if cap(buf) < head+1 {
		buf = make([]byte, 0, max64k(head+1))
	}
	buf = buf[:0]
	checked := false
	for {
		if int64(len(buf)) > max {
			return nil, true, false, nil // grew while read
		}
		end := cap(buf)
		if !checked {
			end = min(end, head)
		}
		if len(buf) == end {
			// Only a file of at least head bytes gets here unchecked.
			if !checked {
				checked = true
				if skip(buf[:head]) {
					return buf, false, true, nil
				}
				var st syscall.Stat_t
				if err := syscall.Fstat(fd, &st); err != nil {
					return nil, false, false, err
				}
				if st.Size > max {
					return nil, true, false, nil
				}
				if want := int(st.Size) + 1; cap(buf) < want {
					buf = append(make([]byte, 0, want), buf...)
				}
			} else {
				buf = append(make([]byte, 0, 2*cap(buf)), buf...) // grew while read
			}
			continue
		}
		n, err := syscall.Read(fd, buf[len(buf):end])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false, false, err
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	if !checked && skip(buf) {
		return buf, false, true, nil
	}
	return buf, false, false, nil
}

func max64k(n int) int { return max(n, 64<<10) }

// closeDir closes a directory descriptor of readWholeAt.
func closeDir(fd int) { syscall.Close(fd) }
