//go:build !(linux || darwin || freebsd || openbsd || netbsd)

package extensions

import (
	"errors"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// mountRoot would be an opened grant directory; there are none here.
type mountRoot struct{ real string }

// close has nothing to close.
func (r *mountRoot) close() {}

// openMountRoot refuses: without openat and O_NOFOLLOW this host cannot
// keep lookups beneath a directory, and a mount that follows symlinks out
// is no sandbox.
func openMountRoot(string) (*mountRoot, error) {
	return nil, errors.New("fs grants need a Unix host (Linux, macOS, BSD) to keep an extension inside its folders; remove the grant on this system")
}

// mountFS is never built here (openMountRoot fails first).
type mountFS struct {
	experimentalsys.UnimplementedFS
	root     *mountRoot
	readOnly bool
	deny     escapeLogger
}
