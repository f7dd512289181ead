//go:build linux

package gitignore

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// readDir lists the directory abs, sorted by name, as os.ReadDir does,
// with a bare descriptor and getdents64 into buf (reused by the walk):
// no *os.File (its fstat and cleanup), no DirEntry per entry, and fewer
// getdents calls than os's 8KB buffer. An entry whose type the file system
// does not give (DT_UNKNOWN) is looked up with lstat, as os does. With
// keep the directory stays open and its descriptor is returned (for
// openat), else fd is -1.
//
// With nofollow a symbolic link in abs's place is not followed (the open
// fails): the walk met abs as a directory, so a link there now is one
// swapped in since. With parent (not -1), the open directory abs is in,
// abs is opened by its last element relative to parent, so nothing above
// it can have been swapped either.
func readDir(abs string, buf *[]byte, keep, nofollow bool, parent int) (entries []dirEntry, fd int, err error) {
	flags := syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_CLOEXEC
	if nofollow {
		flags |= syscall.O_NOFOLLOW
	}
	for {
		if parent >= 0 {
			fd, err = syscall.Openat(parent, abs[strings.LastIndexByte(abs, '/')+1:], flags, 0)
		} else {
			fd, err = syscall.Open(abs, flags, 0)
		}
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, -1, err
	}
	entries, err = readDirFd(fd, abs, buf)
	if err != nil || !keep {
		syscall.Close(fd)
		return entries, -1, err
	}
	return entries, fd, nil
}

func readDirFd(fd int, abs string, buf *[]byte) ([]dirEntry, error) {
	if len(*buf) == 0 {
		*buf = make([]byte, 32<<10)
	}
	b := *buf
	var out []dirEntry
	for {
		n, err := syscall.ReadDirent(fd, b)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(b[off+16:]))
			if reclen == 0 || off+reclen > n {
				break
			}
			ino := binary.NativeEndian.Uint64(b[off:])
			typ := b[off+18]
			name := b[off+19 : off+reclen]
			if i := indexNUL(name); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if ino == 0 || (len(name) == 1 && name[0] == '.') || (len(name) == 2 && name[0] == '.' && name[1] == '.') {
				continue
			}
			e := dirEntry{name: string(name)}
			switch typ {
			case syscall.DT_REG:
			case syscall.DT_DIR:
				e.typ = fs.ModeDir
			case syscall.DT_LNK:
				e.typ = fs.ModeSymlink
			case syscall.DT_FIFO:
				e.typ = fs.ModeNamedPipe
			case syscall.DT_SOCK:
				e.typ = fs.ModeSocket
			case syscall.DT_CHR:
				e.typ = fs.ModeDevice | fs.ModeCharDevice
			case syscall.DT_BLK:
				e.typ = fs.ModeDevice
			default:
				fi, err := os.Lstat(abs + "/" + e.name)
				if err != nil {
					continue // gone since the listing, as os.ReadDir skips it
				}
				e.typ = fi.Mode().Type()
			}
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}
