//go:build unix

package extensions_test

import (
	"syscall"
	"testing"
	"time"
)

// pollGone waits until kill(pid, 0) fails, checking every 10 ms until
// timeout. A bounded poll loop with a deadline: used only where nothing
// observable signals the end of a process that is not our child (no
// pidfd), see waitGone.
func pollGone(t *testing.T, pid int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still alive %s later", pid, timeout)
		}
		time.Sleep(10 * time.Millisecond) // polling, not ordering: see the doc comment
	}
}
