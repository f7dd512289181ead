//go:build !(linux || darwin || freebsd || openbsd || netbsd)

package rootfs

import (
	"errors"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Root would be an opened grant directory; there are none here.
type Root struct{ real string }

// Close has nothing to close.
func (r *Root) Close() {}

// Open refuses: without openat and O_NOFOLLOW this host cannot
// keep lookups beneath a directory, and a mount that follows symlinks out
// is no sandbox.
func Open(string) (*Root, error) {
	return nil, errors.New("fs grants need a Unix host (Linux, macOS, BSD) to keep an extension inside its folders; remove the grant on this system")
}

// FS is never built here (Open fails first).
type FS struct {
	experimentalsys.UnimplementedFS
	root     *Root
	readOnly bool
	deny     DenyFunc
}
