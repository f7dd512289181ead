//go:build linux

package builtin

import (
	"os"
	"testing"
)

// BenchmarkProcScan is one scan of /proc as the process control does it:
// reading the environment of every process (worst case) or only of those
// started since this process (what KillAllBash does).
func BenchmarkProcScan(b *testing.B) {
	marker := []byte("\x00" + bashMarkerEnv + "=none\x00")
	for _, c := range []struct {
		name  string
		since uint64
	}{{"every environment", 0}, {"since pi started", startTicks(os.Getpid())}} {
		b.Run(c.name, func(b *testing.B) {
			m := newProcMatcher(map[int]bool{}, marker, c.since, -1)
			b.ReportMetric(float64(len(scanProcs())), "procs")
			for i := 0; i < b.N; i++ {
				m.cache = nil
				findTargets(scanProcs(), m)
			}
		})
	}
}
