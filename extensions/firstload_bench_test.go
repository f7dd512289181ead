package extensions_test

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFirstLoadProcess: what loading a Go guest (the loc example,
// compilation cache warm) costs a fresh process, in CPU and peak RSS:
// each op runs this test binary twice as a child, once loading the guest
// (TestLoadChild: NewHost, Load with init, Close) and once doing nothing,
// and the metrics are the medians of each (user + system CPU and peak RSS
// from the child's rusage) and their differences, the load's own cost.
func BenchmarkFirstLoadProcess(b *testing.B) {
	path, _ := benchGuest(b)
	cache := b.TempDir()
	type sample struct {
		cpu time.Duration
		rss int64 // KiB
	}
	child := func(load bool) sample {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLoadChild$", "-test.count=1")
		cmd.Env = os.Environ()
		if load {
			cmd.Env = append(cmd.Env, "PI_EXT_LOAD_CHILD="+path, "PI_EXT_LOAD_CACHE="+cache)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return sample{time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Maxrss}
	}
	child(true) // fill the cache
	var loads, idles []sample
	b.ResetTimer()
	for range b.N {
		loads = append(loads, child(true))
		idles = append(idles, child(false))
	}
	b.StopTimer()
	median := func(s []sample) (float64, float64) {
		cpu := make([]time.Duration, len(s))
		rss := make([]int64, len(s))
		for i, x := range s {
			cpu[i], rss[i] = x.cpu, x.rss
		}
		slices.Sort(cpu)
		slices.Sort(rss)
		return float64(cpu[len(cpu)/2].Microseconds()) / 1000, float64(rss[len(rss)/2]) / 1024
	}
	lc, lr := median(loads)
	ic, ir := median(idles)
	b.ReportMetric(lc, "load-cpu-ms")
	b.ReportMetric(ic, "idle-cpu-ms")
	b.ReportMetric(lc-ic, "extra-cpu-ms")
	b.ReportMetric(lr-ir, "extra-rss-MiB")
}
