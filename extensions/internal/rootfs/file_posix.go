//go:build linux || darwin || freebsd || openbsd || netbsd

package rootfs

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// mountFile is a file or directory opened through a FS. It works on
// its fd only: nothing it does looks a path up again (wazero's own file
// reopens directories by host path to rewind them; this one seeks).
type mountFile struct {
	f        *os.File
	fd       int
	flag     experimentalsys.Oflag
	readOnly bool
	closed   bool

	statted bool // the fields below are cached from the first fstat
	dev     uint64
	ino     sys.Inode
	isDir   bool
}

var _ experimentalsys.PollableFile = (*mountFile)(nil)

func newMountFile(fd int, name string, flag experimentalsys.Oflag, readOnly bool) *mountFile {
	return &mountFile{f: os.NewFile(uintptr(fd), name), fd: fd, flag: flag, readOnly: readOnly}
}

func (f *mountFile) cached() experimentalsys.Errno {
	if f.statted {
		return 0
	}
	_, errno := f.Stat()
	return errno
}

// Dev is the device of the file.
func (f *mountFile) Dev() (uint64, experimentalsys.Errno) {
	errno := f.cached()
	return f.dev, errno
}

// Ino is the inode of the file.
func (f *mountFile) Ino() (sys.Inode, experimentalsys.Errno) {
	errno := f.cached()
	return f.ino, errno
}

// IsDir reports whether the file is a directory.
func (f *mountFile) IsDir() (bool, experimentalsys.Errno) {
	errno := f.cached()
	return f.isDir, errno
}

// IsAppend reports O_APPEND.
func (f *mountFile) IsAppend() bool { return f.flag&experimentalsys.O_APPEND != 0 }

// SetAppend sets or clears O_APPEND on the fd.
func (f *mountFile) SetAppend(enable bool) experimentalsys.Errno {
	if errno := f.check(true); errno != 0 {
		return errno
	}
	if enable && f.readOnly {
		return experimentalsys.EROFS
	}
	fl, err := unix.FcntlInt(uintptr(f.fd), unix.F_GETFL, 0)
	if err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	if enable {
		fl |= unix.O_APPEND
	} else {
		fl &^= unix.O_APPEND
	}
	if _, err := unix.FcntlInt(uintptr(f.fd), unix.F_SETFL, fl); err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	if enable {
		f.flag |= experimentalsys.O_APPEND
	} else {
		f.flag &^= experimentalsys.O_APPEND
	}
	return 0
}

// Stat is fstat.
func (f *mountFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	var st unix.Stat_t
	if err := unix.Fstat(f.fd, &st); err != nil {
		return sys.Stat_t{}, experimentalsys.UnwrapOSError(err)
	}
	s := statFromUnix(&st)
	f.statted, f.dev, f.ino, f.isDir = true, s.Dev, s.Ino, s.Mode.IsDir()
	return s, 0
}

// check answers EBADF for a closed file and, with wantFile, EISDIR for a
// directory.
func (f *mountFile) check(wantFile bool) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if wantFile {
		if isDir, errno := f.IsDir(); errno != 0 {
			return errno
		} else if isDir {
			return experimentalsys.EISDIR
		}
	}
	return 0
}

// failed refines the errno of a failed read or write: EBADF when closed,
// EISDIR on a directory.
func (f *mountFile) failed(errno experimentalsys.Errno) experimentalsys.Errno {
	if e := f.check(true); e != 0 {
		return e
	}
	return errno
}

// Read reads at the current offset.
func (f *mountFile) Read(buf []byte) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	if f.closed {
		return 0, experimentalsys.EBADF
	}
	var n int
	var err error
	if f.IsNonblock() {
		n, err = unix.Read(f.fd, buf)
		n = max(n, 0)
	} else {
		n, err = f.f.Read(buf)
	}
	if errno := experimentalsys.UnwrapOSError(err); errno != 0 {
		return n, f.failed(errno)
	}
	return n, 0
}

// Pread reads at off.
func (f *mountFile) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	if off < 0 {
		return 0, experimentalsys.EINVAL
	}
	n, err := f.f.ReadAt(buf, off)
	if errno := experimentalsys.UnwrapOSError(err); errno != 0 {
		return n, f.failed(errno)
	}
	return n, 0
}

// Seek moves the offset; on a directory a seek to 0 rewinds its listing.
func (f *mountFile) Seek(offset fileOffset, whence int) (int64, experimentalsys.Errno) {
	if f.closed {
		return 0, experimentalsys.EBADF
	}
	if whence < io.SeekStart || whence > io.SeekEnd {
		return 0, experimentalsys.EINVAL
	}
	n, err := f.f.Seek(offset, whence)
	return n, experimentalsys.UnwrapOSError(err)
}

// Poll waits for the fd to be readable or writable.
func (f *mountFile) Poll(flag experimentalsys.Pflag, timeoutMillis int32) (bool, experimentalsys.Errno) {
	if f.closed {
		return false, experimentalsys.EBADF
	}
	var events int16
	if flag&experimentalsys.POLLIN != 0 {
		events |= unix.POLLIN
	}
	if flag&experimentalsys.POLLOUT != 0 {
		events |= unix.POLLOUT
	}
	fds := []unix.PollFd{{Fd: int32(f.fd), Events: events}}
	n, err := unix.Poll(fds, int(timeoutMillis))
	if err != nil {
		return false, experimentalsys.UnwrapOSError(err)
	}
	return n > 0, 0
}

// IsNonblock reports O_NONBLOCK.
func (f *mountFile) IsNonblock() bool { return f.flag&experimentalsys.O_NONBLOCK != 0 }

// SetNonblock sets or clears O_NONBLOCK on the fd.
func (f *mountFile) SetNonblock(enable bool) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if err := unix.SetNonblock(f.fd, enable); err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	if enable {
		f.flag |= experimentalsys.O_NONBLOCK
	} else {
		f.flag &^= experimentalsys.O_NONBLOCK
	}
	return 0
}

// Readdir lists up to n entries (all when n <= 0) from the current
// position. Go's os package stats each entry relative to the directory fd.
func (f *mountFile) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if f.closed {
		return nil, experimentalsys.EBADF
	}
	if isDir, errno := f.IsDir(); errno != 0 {
		return nil, errno
	} else if !isDir {
		return nil, experimentalsys.EBADF
	}
	fis, err := f.f.Readdir(n)
	if errno := experimentalsys.UnwrapOSError(err); errno != 0 {
		if errno == experimentalsys.EINVAL || errno == experimentalsys.ENOTDIR {
			errno = experimentalsys.EBADF
		}
		return nil, errno
	}
	out := make([]experimentalsys.Dirent, 0, len(fis))
	for _, fi := range fis {
		var ino sys.Inode
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = sys.Inode(st.Ino)
		}
		out = append(out, experimentalsys.Dirent{Name: fi.Name(), Ino: ino, Type: fi.Mode().Type()})
	}
	return out, 0
}

// Write writes at the current offset (at the end with O_APPEND).
func (f *mountFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if errno := f.writable(); errno != 0 {
		return 0, errno
	}
	if len(buf) == 0 {
		return 0, 0
	}
	var n int
	var err error
	if f.IsNonblock() {
		n, err = unix.Write(f.fd, buf)
		n = max(n, 0)
	} else {
		n, err = f.f.Write(buf)
	}
	if errno := experimentalsys.UnwrapOSError(err); errno != 0 {
		return n, f.failed(errno)
	}
	return n, 0
}

// Pwrite writes at off.
func (f *mountFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if errno := f.writable(); errno != 0 {
		return 0, errno
	}
	if len(buf) == 0 {
		return 0, 0
	}
	if off < 0 {
		return 0, experimentalsys.EINVAL
	}
	n, err := f.f.WriteAt(buf, off)
	if errno := experimentalsys.UnwrapOSError(err); errno != 0 {
		return n, f.failed(errno)
	}
	return n, 0
}

// writable answers EBADF when closed, EISDIR for a directory and EROFS on
// a read-only mount.
func (f *mountFile) writable() experimentalsys.Errno {
	if errno := f.check(true); errno != 0 {
		return errno
	}
	if f.readOnly {
		return experimentalsys.EROFS
	}
	return 0
}

// Truncate sets the size.
func (f *mountFile) Truncate(size int64) experimentalsys.Errno {
	if errno := f.writable(); errno != 0 {
		return errno
	}
	if size < 0 {
		return experimentalsys.EINVAL
	}
	return experimentalsys.UnwrapOSError(unix.Ftruncate(f.fd, size))
}

// Sync is fsync.
func (f *mountFile) Sync() experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	return experimentalsys.UnwrapOSError(unix.Fsync(f.fd))
}

// Datasync is fdatasync where it exists, else fsync.
func (f *mountFile) Datasync() experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	return experimentalsys.UnwrapOSError(fdatasync(f.fd))
}

// Utimens sets the file's times.
func (f *mountFile) Utimens(atim, mtim int64) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if f.readOnly {
		return experimentalsys.EROFS
	}
	return futimens(f.fd, atim, mtim)
}

// Close closes the fd; closing twice is no error.
func (f *mountFile) Close() experimentalsys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	return experimentalsys.UnwrapOSError(f.f.Close())
}
