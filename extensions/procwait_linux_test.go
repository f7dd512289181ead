//go:build linux

package extensions_test

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// waitGone waits until process pid (not necessarily our child) has ended,
// failing the test after timeout. On Linux it waits on a pidfd, which
// becomes readable when the process ends; where pidfd_open is missing
// (kernels before 5.3, seccomp filters) it falls back to pollGone.
func waitGone(t *testing.T, pid int, timeout time.Duration) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return // already gone
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
		pollGone(t, pid, timeout)
		return
	case err != nil:
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("process %d is still alive %s later", pid, timeout)
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll pidfd of %d: %v", pid, err)
		}
		if n > 0 {
			return
		}
	}
}
