//go:build linux && !amd64 && !arm64

package sandbox

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// shareMemory is 0 where there is no clone3Vfork: the fork server's child
// is a plain fork (its own copy of the server's memory), and the server
// waits for its exec on a close-on-exec pipe.
const shareMemory = 0

// clone3Vfork is a plain clone3 here.
//
//go:nosplit
//go:norace
func clone3Vfork(args, size uintptr) (pid, errno uintptr) {
	r, _, e := syscall.RawSyscall(unix.SYS_CLONE3, args, size, 0)
	return r, uintptr(e)
}
