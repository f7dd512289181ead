// Package rootfs is the extension host's file system beneath a granted
// root: what a guest's WASI fs calls reach for one fs grant.
//
// What it guarantees. Every fs grant is mounted with an FS: a wazero
// experimental/sys.FS whose every path operation resolves beneath the
// grant's directory, opened once at load (Open), so a later swap of the
// path that named it (a folder replaced by a symlink) does not move the
// mount. No step of a lookup follows a symlink out of the mount: on Linux
// with openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS) relative to the root
// fd, elsewhere (and on Linux when openat2 is missing or refuses a link it
// cannot judge, such as an absolute one) by walking the path one component
// at a time with O_NOFOLLOW and reading each symlink itself. An operation on
// a name (mkdir, unlink, rename, link, symlink, readlink, lstat, …) opens
// the name's parent beneath the root and uses the *at syscall on the last
// component without following it. An opened file works on its fd only and
// never looks a path up again.
//
// Symlinks work while they stay in the mount: relative ones, and absolute
// ones naming a place under the mount's real path. A symlink that would
// lead out of the mount is refused with EACCES (and reported to the
// DenyFunc with DenyThroughLink) for every operation, whether the guest
// just made it or it was there before (a link committed in a cloned
// repository). Making such a link fails with EPERM. A read-only mount
// refuses every change with EROFS.
//
// Outside, mounted at "/" after the grants, answers every path no grant
// covers: it reports it (DenyOutside) and refuses it with EACCES.
//
// Only Unix hosts (Linux, macOS, the BSDs) can keep lookups beneath a
// directory; elsewhere Open refuses every grant. The package is internal to
// extensions, the only importer of wazero.
package rootfs

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"sync/atomic"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// DenyFunc reports a refused path: guest is the guest path (also the host
// path), why says how it was refused (DenyOutside, DenyThroughLink, or a
// sentence).
type DenyFunc func(guest, why string)

// Reasons a path is refused, as passed to a DenyFunc.
const (
	DenyOutside     = "outside"
	DenyThroughLink = "symlink"
)

// ForceWalk makes every lookup take the component walk, as on a kernel
// without openat2 (tests set it to cover that path on Linux; elsewhere
// every lookup walks anyway).
var ForceWalk atomic.Bool

// New is the file system of one grant as one instance sees it: the shared
// root, whether it is read-only, and where to report refused paths.
func New(root *Root, readOnly bool, deny DenyFunc) *FS {
	return &FS{root: root, readOnly: readOnly, deny: deny}
}

// Outside is the catch-all mounted at "/" after the grants: it reports
// every path to deny and refuses it.
func Outside(deny DenyFunc) experimentalsys.FS {
	return &outside{deny: deny}
}

// errEscape is the internal answer of a lookup that would leave its mount.
var errEscape = errors.New("the path leads outside its mount")

// maxSymlinks bounds the symlinks one lookup follows (ELOOP beyond), like
// the kernel's limit of 40.
const maxSymlinks = 40

// cleanPath turns a path wazero hands to a mount (relative to the mount,
// already cleaned by wazero) into a clean relative path, "." for the root.
// It clamps ".." at the root lexically, as a chroot would; wazero refuses
// such paths before they get here, so this is only a second fence. dirOnly
// reports a trailing slash: the path must name a directory.
func cleanPath(p string) (clean string, dirOnly bool) {
	dirOnly = strings.HasSuffix(p, "/")
	clean = path.Clean("/" + p)[1:]
	if clean == "" {
		clean = "."
	}
	return clean, dirOnly
}

// splitPath splits a relative or absolute path into its components,
// dropping empty ones and "."; ".." is kept.
func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// within reports whether the absolute path target lies in the directory
// real (absolute, clean) and returns its components below real. Only
// empty and "." components are dropped before comparing: a ".." stays in
// rel, for the caller to judge against the mount's root.
func within(real, target string) (rel []string, ok bool) {
	if !strings.HasPrefix(target, "/") {
		return nil, false
	}
	base := splitPath(real)
	comps := splitPath(target)
	if len(comps) < len(base) {
		return nil, false
	}
	for i, c := range base {
		if comps[i] != c {
			return nil, false
		}
	}
	return comps[len(base):], true
}

// linkTargetStaysIn judges a symlink target lexically, as the kernel would
// read it from the link's folder (folder: the folder's components below
// the mount root): false if any prefix of it climbs above the mount root,
// or if it is absolute and not under real.
func linkTargetStaysIn(real string, folder []string, target string) bool {
	comps := splitPath(target)
	depth := len(folder)
	if strings.HasPrefix(target, "/") {
		rel, ok := within(real, target)
		if !ok {
			return false
		}
		comps, depth = rel, 0
	}
	for _, c := range comps {
		if c == ".." {
			depth--
			if depth < 0 {
				return false
			}
		} else {
			depth++
		}
	}
	return true
}

// writeFlags are the open flags a read-only mount refuses.
const writeFlags = experimentalsys.O_WRONLY | experimentalsys.O_RDWR | experimentalsys.O_CREAT |
	experimentalsys.O_TRUNC | experimentalsys.O_APPEND

// wantsWrite reports whether an open with flag could change the file.
func wantsWrite(flag experimentalsys.Oflag) bool {
	return flag&writeFlags != 0
}

// guestJoin is the guest path of p (relative to a mount at dir).
func guestJoin(dir, p string) string {
	if p == "." || p == "" {
		return dir
	}
	if dir == "/" {
		return "/" + p
	}
	return dir + "/" + p
}

// fileOffset is int64 under another name. sys.File's Seek returns an Errno
// where io.Seeker returns an error, and go vet's stdmethods check flags any
// method Seek(int64, int) that is not an io.Seeker; declaring the offset
// through an alias keeps the signature identical for wazero and out of
// that check.
type fileOffset = int64

// outside is mounted at "/" after the grants, so a guest path no grant
// covers lands here instead of nowhere: it reports the path and refuses it
// with EACCES. Its root opens as an empty, unreadable directory, because
// wazero and guests look at every preopen as a directory at start.
type outside struct {
	experimentalsys.UnimplementedFS
	deny DenyFunc
}

var _ experimentalsys.FS = (*outside)(nil)

func (o *outside) refuse(p string) experimentalsys.Errno {
	c, _ := cleanPath(p)
	o.deny(guestJoin("/", c), DenyOutside)
	return experimentalsys.EACCES
}

// OpenFile opens only the root itself, as an empty directory; anything else
// is refused.
func (o *outside) OpenFile(p string, flag experimentalsys.Oflag, _ fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if c, _ := cleanPath(p); c == "." && !wantsWrite(flag) {
		return &outsideRoot{deny: o.deny}, 0
	}
	return nil, o.refuse(p)
}

// Lstat refuses.
func (o *outside) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	return sys.Stat_t{}, o.refuse(p)
}

// Stat refuses.
func (o *outside) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	return sys.Stat_t{}, o.refuse(p)
}

// Mkdir refuses.
func (o *outside) Mkdir(p string, _ fs.FileMode) experimentalsys.Errno { return o.refuse(p) }

// Chmod refuses.
func (o *outside) Chmod(p string, _ fs.FileMode) experimentalsys.Errno { return o.refuse(p) }

// Rename refuses.
func (o *outside) Rename(from, _ string) experimentalsys.Errno { return o.refuse(from) }

// Rmdir refuses.
func (o *outside) Rmdir(p string) experimentalsys.Errno { return o.refuse(p) }

// Unlink refuses.
func (o *outside) Unlink(p string) experimentalsys.Errno { return o.refuse(p) }

// Link refuses.
func (o *outside) Link(oldPath, _ string) experimentalsys.Errno { return o.refuse(oldPath) }

// Symlink refuses.
func (o *outside) Symlink(_, link string) experimentalsys.Errno { return o.refuse(link) }

// Readlink refuses.
func (o *outside) Readlink(p string) (string, experimentalsys.Errno) { return "", o.refuse(p) }

// Utimens refuses.
func (o *outside) Utimens(p string, _, _ int64) experimentalsys.Errno { return o.refuse(p) }

// outsideRoot is the root of outside: a directory with no entries to
// show, whose listing is refused.
type outsideRoot struct {
	experimentalsys.DirFile
	deny   DenyFunc
	closed bool
}

var _ experimentalsys.File = (*outsideRoot)(nil)

// Dev is 0: the directory is not a host directory.
func (r *outsideRoot) Dev() (uint64, experimentalsys.Errno) { return 0, r.check() }

// Ino is 0: the directory is not a host directory.
func (r *outsideRoot) Ino() (sys.Inode, experimentalsys.Errno) { return 0, r.check() }

// Stat describes a directory without permissions.
func (r *outsideRoot) Stat() (sys.Stat_t, experimentalsys.Errno) {
	return sys.Stat_t{Mode: fs.ModeDir, Nlink: 1}, r.check()
}

// Seek accepts a rewind only.
func (r *outsideRoot) Seek(offset fileOffset, whence int) (int64, experimentalsys.Errno) {
	if errno := r.check(); errno != 0 {
		return 0, errno
	}
	if offset != 0 || whence != 0 {
		return 0, experimentalsys.EINVAL
	}
	return 0, 0
}

// Readdir refuses: listing "/" is outside every grant.
func (r *outsideRoot) Readdir(int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if errno := r.check(); errno != 0 {
		return nil, errno
	}
	r.deny("/", DenyOutside)
	return nil, experimentalsys.EACCES
}

// Sync does nothing.
func (r *outsideRoot) Sync() experimentalsys.Errno { return r.check() }

// Datasync does nothing.
func (r *outsideRoot) Datasync() experimentalsys.Errno { return r.check() }

// Utimens refuses.
func (r *outsideRoot) Utimens(int64, int64) experimentalsys.Errno {
	if errno := r.check(); errno != 0 {
		return errno
	}
	r.deny("/", DenyOutside)
	return experimentalsys.EACCES
}

// Close closes.
func (r *outsideRoot) Close() experimentalsys.Errno {
	r.closed = true
	return 0
}

func (r *outsideRoot) check() experimentalsys.Errno {
	if r.closed {
		return experimentalsys.EBADF
	}
	return 0
}
