//go:build linux

package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
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

// BenchmarkBashTrueCgroup is BenchmarkBashTrue with the call's cgroup
// (created, the shell started in it, emptied check, removed) and without
// (sessions and the tag scan only): the difference is what a cgroup costs
// per call.
func BenchmarkBashTrueCgroup(b *testing.B) {
	def := BashDefinition(BashOptions{})
	args := json.RawMessage(`{"command":"true"}`)
	dir := b.TempDir()
	run := func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			r, err := def.Execute(context.Background(), tool.NewCall("b", args, nil), tool.Context{Cwd: dir})
			if err != nil || r.IsError {
				b.Fatalf("bash: %v %s", err, r.Text())
			}
		}
	}
	b.Run("cgroup", func(b *testing.B) {
		if on, why := bashCgroupState(); !on {
			b.Skipf("no cgroups: %v", why)
		}
		run(b)
	})
	b.Run("no cgroup", func(b *testing.B) {
		cg := &bashTracker.cg
		cg.Lock()
		was, why := cg.off, cg.why
		cg.off, cg.why = true, errors.New("off for a benchmark")
		cg.Unlock()
		defer func() {
			cg.Lock()
			cg.off, cg.why = was, why
			cg.Unlock()
		}()
		run(b)
	})
}
