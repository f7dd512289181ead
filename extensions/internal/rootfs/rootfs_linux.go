package rootfs

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

const (
	// rootOpenFlags and dirOpenFlags open directories for lookups only:
	// O_PATH needs no read permission and cannot be read from.
	rootOpenFlags = unix.O_PATH
	dirOpenFlags  = unix.O_PATH
	// statOpenFlags opens a file just to fstat it.
	statOpenFlags = unix.O_PATH
	oRSYNC        = unix.O_RSYNC
	oDSYNC        = unix.O_DSYNC
)

// hasOpenat2 probes once whether openat2 works here: Linux 5.6 and later,
// unless a seccomp filter refuses it.
var hasOpenat2 = sync.OnceValue(func() bool {
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(root)
	fd, err := unix.Openat2(root, ".", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH})
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

// beneath opens p relative to the mount root with openat2, which refuses
// any step out of the root (a ".." above it, an absolute symlink, a symlink
// whose target climbs out) and /proc-style magic links. It answers
// errUseWalk when the walk must decide instead: openat2 is missing, or it
// met a link it refuses wholesale (EXDEV) though its target may still lie
// in the mount (an absolute link naming the mount's own path), or a rename
// raced it more than a few times.
func (m *FS) beneath(p string, flags int, perm uint32) (int, error) {
	if ForceWalk.Load() || !hasOpenat2() {
		return -1, errUseWalk
	}
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(perm)
	}
	for range 4 {
		fd, err := unix.Openat2(m.root.fd, p, &how)
		switch err {
		case nil:
			return fd, nil
		case unix.EAGAIN, unix.EINTR:
			continue
		case unix.EXDEV:
			return -1, errUseWalk
		}
		return -1, err
	}
	return -1, errUseWalk
}

// fdatasync syncs a file's data.
func fdatasync(fd int) error { return unix.Fdatasync(fd) }

// futimens sets the times of an open file (utimensat with a NULL path).
func futimens(fd int, atim, mtim int64) experimentalsys.Errno {
	if atim == experimentalsys.UTIME_OMIT && mtim == experimentalsys.UTIME_OMIT {
		return 0
	}
	one := func(t int64) unix.Timespec {
		if t == experimentalsys.UTIME_OMIT {
			return unix.Timespec{Nsec: unix.UTIME_OMIT}
		}
		return unix.NsecToTimespec(t)
	}
	ts := [2]unix.Timespec{one(atim), one(mtim)}
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
	if e != 0 {
		return experimentalsys.UnwrapOSError(e)
	}
	return 0
}
