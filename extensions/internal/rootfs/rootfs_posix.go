//go:build linux || darwin || freebsd || openbsd || netbsd

package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// Root is the directory of one fs grant, opened once at load and kept
// open: later changes to the path that named it (a folder swapped for a
// symlink) do not move the mount.
type Root struct {
	real string   // real absolute path; also the guest path
	file *os.File // owns fd; closed by close
	fd   int      // a directory fd (O_PATH on Linux)
}

// Open opens the directory real (the real path of a grant, every
// symlink resolved) and checks that what it opened is still what real
// names, so a swap between resolving and opening is noticed.
func Open(real string) (*Root, error) {
	fd, err := unix.Open(real, rootOpenFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", real, err)
	}
	var opened, now unix.Stat_t
	if err := unix.Fstat(fd, &opened); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("stat %s: %w", real, err)
	}
	if err := unix.Stat(real, &now); err != nil || now.Dev != opened.Dev || now.Ino != opened.Ino {
		unix.Close(fd)
		return nil, fmt.Errorf("open %s: the directory changed while it was being mounted; try again", real)
	}
	return &Root{real: real, file: os.NewFile(uintptr(fd), real), fd: fd}, nil
}

// Close closes the directory when the extension closes (or its load fails)
// rather than when the garbage collector finds the file. A second call does
// nothing (os.File remembers it is closed, so the fd number, which may be
// reused by then, is not closed again).
func (r *Root) Close() { _ = r.file.Close() }

// FS is one grant as one instance sees it: the shared root, whether it
// is read-only, and where to report refused paths.
type FS struct {
	experimentalsys.UnimplementedFS
	root     *Root
	readOnly bool
	deny     DenyFunc
}

var _ experimentalsys.FS = (*FS)(nil)

// String names the mount, for wazero's debug output.
func (m *FS) String() string { return m.root.real }

// errUseWalk is beneath's answer when the component walk must do the
// lookup instead.
var errUseWalk = errors.New("look the path up with the component walk")

// dirRef is a directory fd found by a lookup; owned ones are closed by
// release, the mount root is not.
type dirRef struct {
	fd    int
	owned bool
}

func (d dirRef) release() {
	if d.owned {
		unix.Close(d.fd)
	}
}

// errno turns an internal error into what the guest sees, reporting an
// escape (guest is the path the guest asked for).
func (m *FS) errno(err error, guest string) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	if errors.Is(err, errEscape) {
		m.deny(guestJoin(m.root.real, guest), DenyThroughLink)
		return experimentalsys.EACCES
	}
	return experimentalsys.UnwrapOSError(err)
}

// walk resolves p (clean, relative to the root) one component at a time.
// Every directory on the way is opened with O_NOFOLLOW relative to the one
// before, and a symlink met on the way is read and its target resolved in
// turn: a relative target from the link's folder, an absolute one from the
// root when it lies under the mount's real path. ".." is taken from the
// stack of directories already open, never from the file system, and ".."
// at the root is an escape. With followLast the last component is followed
// too when it is a symlink; otherwise it is returned as is.
//
// walk returns the directory holding the last component, the component's
// name ("." when the lookup ends on a directory itself) and the folder's
// components below the root.
func (m *FS) walk(p string, followLast bool) (dirRef, string, []string, error) {
	defer runtime.KeepAlive(m.root)
	fds := []int{m.root.fd}
	var names []string
	closeAbove := func(keep int) {
		for len(fds) > keep {
			unix.Close(fds[len(fds)-1])
			fds = fds[:len(fds)-1]
		}
		names = names[:keep-1]
	}
	result := func(name string) (dirRef, string, []string, error) {
		top := len(fds) - 1
		for i := 1; i < top; i++ {
			unix.Close(fds[i])
		}
		return dirRef{fd: fds[top], owned: top > 0}, name, names, nil
	}
	fail := func(err error) (dirRef, string, []string, error) {
		closeAbove(1)
		return dirRef{}, "", nil, err
	}
	queue := splitPath(p)
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.") {
		// The last component must be a directory: look it up as one.
		queue = append(queue, ".")
	}
	links := 0
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == "." && len(queue) > 0 {
			continue
		}
		if c == ".." {
			if len(fds) == 1 {
				return fail(errEscape)
			}
			closeAbove(len(fds) - 1)
			continue
		}
		last := len(queue) == 0
		if c == "." {
			return result(".")
		}
		top := fds[len(fds)-1]
		if last && !followLast {
			return result(c)
		}
		if last {
			var st unix.Stat_t
			if err := unix.Fstatat(top, c, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
				// Missing (the operation may create it) or not a link.
				return result(c)
			}
		} else {
			fd, err := unix.Openat(top, c, dirOpenFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err == nil {
				fds = append(fds, fd)
				names = append(names, c)
				continue
			}
			var st unix.Stat_t
			if serr := unix.Fstatat(top, c, &st, unix.AT_SYMLINK_NOFOLLOW); serr != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
				return fail(err)
			}
		}
		// c is a symlink: continue with its target.
		if links++; links > maxSymlinks {
			return fail(unix.ELOOP)
		}
		target, err := readlinkat(top, c)
		if err != nil {
			return fail(err)
		}
		if target == "" {
			return fail(unix.ENOENT)
		}
		rest := splitPath(target)
		if strings.HasPrefix(target, "/") {
			rel, ok := within(m.root.real, target)
			if !ok {
				return fail(errEscape)
			}
			closeAbove(1)
			rest = rel
		}
		if strings.HasSuffix(target, "/") {
			rest = append(rest, ".")
		}
		if len(rest) == 0 {
			rest = []string{"."}
		}
		queue = append(rest, queue...)
	}
	return result(".")
}

// parent finds the folder of p's last component (without following that
// component) and the component's name.
func (m *FS) parent(p string) (dirRef, string, error) {
	dir, base := path.Split(p)
	if base == "" {
		base = "."
	}
	if dir == "" {
		return dirRef{fd: m.root.fd}, base, nil
	}
	if fd, err := m.beneath(dir, unix.O_DIRECTORY|dirOpenFlags, 0); err == nil {
		return dirRef{fd: fd, owned: true}, base, nil
	} else if !errors.Is(err, errUseWalk) {
		return dirRef{}, "", err
	}
	d, name, _, err := m.walk(p, false)
	return d, name, err
}

// open opens p beneath the root with the unix open flags flags.
func (m *FS) open(p string, flags int, perm uint32) (int, error) {
	fd, err := m.beneath(p, flags, perm)
	if !errors.Is(err, errUseWalk) {
		return fd, err
	}
	d, name, _, err := m.walk(p, flags&unix.O_NOFOLLOW == 0)
	if err != nil {
		return -1, err
	}
	defer d.release()
	// The walk left the last component unfollowed or found it not to be a
	// link; O_NOFOLLOW makes a link swapped in since then fail (ELOOP)
	// instead of being followed.
	return unix.Openat(d.fd, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
}

// resolved finds p's final object (following links) as a folder and a name
// that is not a symlink.
func (m *FS) resolved(p string) (dirRef, string, error) {
	d, name, _, err := m.walk(p, true)
	return d, name, err
}

// OpenFile opens a file or directory beneath the mount.
func (m *FS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	defer runtime.KeepAlive(m.root)
	c, dirOnly := cleanPath(p)
	if m.readOnly && wantsWrite(flag) {
		if flag&experimentalsys.O_DIRECTORY != 0 {
			return nil, experimentalsys.EISDIR
		}
		return nil, experimentalsys.EROFS
	}
	if flag&experimentalsys.O_DIRECTORY != 0 && flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR) != 0 {
		return nil, experimentalsys.EISDIR
	}
	q := c
	if dirOnly && c != "." {
		q += "/"
	}
	fd, err := m.open(q, toUnixFlags(flag), uint32(perm.Perm()))
	if err != nil {
		return nil, m.errno(err, c)
	}
	return newMountFile(fd, guestJoin(m.root.real, c), flag, m.readOnly), 0
}

// Lstat stats p without following its last component.
func (m *FS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	defer runtime.KeepAlive(m.root)
	c, dirOnly := cleanPath(p)
	if dirOnly && c != "." {
		c += "/."
	}
	d, name, err := m.parent(c)
	if err != nil {
		return sys.Stat_t{}, m.errno(err, c)
	}
	defer d.release()
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return sys.Stat_t{}, m.errno(err, c)
	}
	return statFromUnix(&st), 0
}

// Stat stats what p names, following symlinks that stay in the mount.
func (m *FS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	defer runtime.KeepAlive(m.root)
	c, dirOnly := cleanPath(p)
	q := c
	if dirOnly && c != "." {
		q += "/"
	}
	var st unix.Stat_t
	if fd, err := m.beneath(q, statOpenFlags, 0); err == nil {
		defer unix.Close(fd)
		if err := unix.Fstat(fd, &st); err != nil {
			return sys.Stat_t{}, m.errno(err, c)
		}
		return statFromUnix(&st), 0
	} else if !errors.Is(err, errUseWalk) {
		return sys.Stat_t{}, m.errno(err, c)
	}
	d, name, err := m.resolved(q)
	if err != nil {
		return sys.Stat_t{}, m.errno(err, c)
	}
	defer d.release()
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return sys.Stat_t{}, m.errno(err, c)
	}
	return statFromUnix(&st), 0
}

// Mkdir makes a directory.
func (m *FS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	defer runtime.KeepAlive(m.root)
	if m.readOnly {
		return experimentalsys.EROFS
	}
	c, _ := cleanPath(p)
	d, name, err := m.parent(c)
	if err != nil {
		return m.errno(err, c)
	}
	defer d.release()
	errno := m.errno(unix.Mkdirat(d.fd, name, uint32(perm.Perm())), c)
	if errno == experimentalsys.ENOTDIR {
		errno = experimentalsys.ENOENT
	}
	return errno
}

// Chmod changes the mode of what p names, following symlinks that stay in
// the mount. (WASI preview 1 has no chmod, so guests cannot reach this.)
func (m *FS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	defer runtime.KeepAlive(m.root)
	if m.readOnly {
		return experimentalsys.EROFS
	}
	c, _ := cleanPath(p)
	d, name, err := m.resolved(c)
	if err != nil {
		return m.errno(err, c)
	}
	defer d.release()
	mode := uint32(perm.Perm())
	err = unix.Fchmodat(d.fd, name, mode, unix.AT_SYMLINK_NOFOLLOW)
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS {
		// No fchmodat2 (Linux before 6.6): chmod through an fd opened
		// without following.
		var fd int
		fd, err = unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Fchmod(fd, mode)
			unix.Close(fd)
		}
	}
	return m.errno(err, c)
}

// Rename renames; both names are looked up beneath the mount without
// following their last component.
func (m *FS) Rename(from, to string) experimentalsys.Errno {
	defer runtime.KeepAlive(m.root)
	if m.readOnly {
		return experimentalsys.EROFS
	}
	cf, _ := cleanPath(from)
	ct, _ := cleanPath(to)
	df, nf, err := m.parent(cf)
	if err != nil {
		return m.errno(err, cf)
	}
	defer df.release()
	dt, nt, err := m.parent(ct)
	if err != nil {
		return m.errno(err, ct)
	}
	defer dt.release()
	if cf == ct {
		var st unix.Stat_t
		return m.errno(unix.Fstatat(df.fd, nf, &st, unix.AT_SYMLINK_NOFOLLOW), cf)
	}
	return m.errno(unix.Renameat(df.fd, nf, dt.fd, nt), cf)
}

// Rmdir removes an empty directory.
func (m *FS) Rmdir(p string) experimentalsys.Errno {
	defer runtime.KeepAlive(m.root)
	if m.readOnly {
		return experimentalsys.EROFS
	}
	c, _ := cleanPath(p)
	d, name, err := m.parent(c)
	if err != nil {
		return m.errno(err, c)
	}
	defer d.release()
	return m.errno(unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR), c)
}

// Unlink removes a name (a symlink itself, never its target).
func (m *FS) Unlink(p string) experimentalsys.Errno {
	defer runtime.KeepAlive(m.root)
	if m.readOnly {
		return experimentalsys.EROFS
	}
	c, _ := cleanPath(p)
	d, name, err := m.parent(c)
	if err != nil {
		return m.errno(err, c)
	}
	defer d.release()
	errno := m.errno(unix.Unlinkat(d.fd, name, 0), c)
	if errno == experimentalsys.EPERM {
		errno = experimentalsys.EISDIR // as wazero's DirFS: unlink of a directory on BSDs
	}
	return errno
}

// Link makes a hard link; both names are looked up beneath the mount, and a
// symlink at oldPath is linked itself, not followed.
func (m *FS) Link(oldPath, newPath string) experimentalsys.Errno {
	defer runtime.KeepAlive(m.root)
	if m.readOnly {
		return experimentalsys.EROFS
	}
	co, _ := cleanPath(oldPath)
	cn, _ := cleanPath(newPath)
	do, no, err := m.parent(co)
	if err != nil {
		return m.errno(err, co)
	}
	defer do.release()
	dn, nn, err := m.parent(cn)
	if err != nil {
		return m.errno(err, cn)
	}
	defer dn.release()
	return m.errno(unix.Linkat(do.fd, no, dn.fd, nn, 0), co)
}

// Symlink makes link point to target, which must stay in the mount when
// read from link's folder (EPERM otherwise).
func (m *FS) Symlink(target, link string) experimentalsys.Errno {
	defer runtime.KeepAlive(m.root)
	if m.readOnly {
		return experimentalsys.EROFS
	}
	if target == "" || strings.IndexByte(target, 0) >= 0 {
		return experimentalsys.EINVAL
	}
	c, _ := cleanPath(link)
	d, name, folder, err := m.walk(c, false)
	if err != nil {
		return m.errno(err, c)
	}
	defer d.release()
	if !linkTargetStaysIn(m.root.real, folder, target) {
		m.deny(guestJoin(m.root.real, c), "a symlink to "+target+" would point outside its grant")
		return experimentalsys.EPERM
	}
	return m.errno(unix.Symlinkat(target, d.fd, name), c)
}

// Readlink reads a symlink's target as it is written.
func (m *FS) Readlink(p string) (string, experimentalsys.Errno) {
	defer runtime.KeepAlive(m.root)
	c, _ := cleanPath(p)
	d, name, err := m.parent(c)
	if err != nil {
		return "", m.errno(err, c)
	}
	defer d.release()
	target, err := readlinkat(d.fd, name)
	return target, m.errno(err, c)
}

// Utimens sets the times of what p names, following symlinks that stay in
// the mount.
func (m *FS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	defer runtime.KeepAlive(m.root)
	if m.readOnly {
		return experimentalsys.EROFS
	}
	c, _ := cleanPath(p)
	d, name, err := m.resolved(c)
	if err != nil {
		return m.errno(err, c)
	}
	defer d.release()
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || atim == experimentalsys.UTIME_OMIT && mtim == experimentalsys.UTIME_OMIT {
		return m.errno(err, c)
	}
	// Keep an omitted time by setting it to what it is: the kernel's
	// UTIME_OMIT differs between systems, and some lack it.
	if atim == experimentalsys.UTIME_OMIT {
		atim = st.Atim.Nano()
	}
	if mtim == experimentalsys.UTIME_OMIT {
		mtim = st.Mtim.Nano()
	}
	ts := []unix.Timespec{unix.NsecToTimespec(atim), unix.NsecToTimespec(mtim)}
	return m.errno(unix.UtimesNanoAt(d.fd, name, ts, unix.AT_SYMLINK_NOFOLLOW), c)
}

// readlinkat reads a symlink relative to a directory fd.
func readlinkat(dirfd int, name string) (string, error) {
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		got, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if got < n {
			return string(buf[:got]), nil
		}
		if n >= 1<<16 {
			return "", unix.ENAMETOOLONG
		}
	}
}

// toUnixFlags converts wazero's open flags.
func toUnixFlags(flag experimentalsys.Oflag) int {
	var f int
	switch flag & (experimentalsys.O_RDONLY | experimentalsys.O_RDWR | experimentalsys.O_WRONLY) {
	case experimentalsys.O_RDWR:
		f = unix.O_RDWR
	case experimentalsys.O_WRONLY:
		f = unix.O_WRONLY
	default:
		f = unix.O_RDONLY
	}
	for _, m := range []struct {
		from experimentalsys.Oflag
		to   int
	}{
		{experimentalsys.O_APPEND, unix.O_APPEND},
		{experimentalsys.O_CREAT, unix.O_CREAT},
		{experimentalsys.O_EXCL, unix.O_EXCL},
		{experimentalsys.O_SYNC, unix.O_SYNC},
		{experimentalsys.O_TRUNC, unix.O_TRUNC},
		{experimentalsys.O_DIRECTORY, unix.O_DIRECTORY},
		{experimentalsys.O_DSYNC, oDSYNC},
		{experimentalsys.O_NOFOLLOW, unix.O_NOFOLLOW},
		{experimentalsys.O_NONBLOCK, unix.O_NONBLOCK},
		{experimentalsys.O_RSYNC, oRSYNC},
	} {
		if flag&m.from != 0 {
			f |= m.to
		}
	}
	return f
}

// statFromUnix converts a kernel stat the way Go's os package reads modes,
// which is what wazero's own DirFS reports.
func statFromUnix(st *unix.Stat_t) sys.Stat_t {
	mode := fs.FileMode(st.Mode & 0o777)
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if uint32(st.Mode)&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if uint32(st.Mode)&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if uint32(st.Mode)&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return sys.Stat_t{
		Dev:   uint64(st.Dev),
		Ino:   st.Ino,
		Mode:  mode,
		Nlink: uint64(st.Nlink),
		Size:  st.Size,
		Atim:  st.Atim.Nano(),
		Mtim:  st.Mtim.Nano(),
		Ctim:  st.Ctim.Nano(),
	}
}

// Make sure syscall errnos and unix errnos are the same type, which
// UnwrapOSError relies on.
var _ syscall.Errno = unix.ENOENT
