//go:build unix && !linux

package extensions_test

import (
	"testing"
	"time"
)

// waitGone waits until process pid has ended, failing the test after
// timeout. Without pidfds there is nothing to wait on for a process that is
// not our child, so it is pollGone.
func waitGone(t *testing.T, pid int, timeout time.Duration) {
	t.Helper()
	pollGone(t, pid, timeout)
}
