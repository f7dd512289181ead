//go:build linux && (amd64 || arm64)

package sandbox

import "golang.org/x/sys/unix"

// shareMemory are the clone flags of the fork server's child on the
// architectures with clone3Vfork: it shares the server's memory and the
// server's thread waits until it has exec'd or exited (as vfork), so no
// page table is copied and no page is copied on write (a plain fork of the
// server cost about half a millisecond a call).
const shareMemory = unix.CLONE_VM | unix.CLONE_VFORK

// clone3Vfork is clone3(args, size) for a child that runs on the caller's
// stack until it execs (vfork_linux_*.s).
func clone3Vfork(args, size uintptr) (pid, errno uintptr)
