package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// startupLimit is the start-up guard of issue 27: `pi version` (every
// package's init, the runtime's set-up, the command) at most this many
// times a Go hello world's wall time, medians of interleaved runs.
const startupLimit = 3.5

// BenchmarkStartup builds pi as the README does (CGO_ENABLED=0) and the
// hello world floor of bench/startup.sh, runs `pi version` and hello in
// turn b.N times, and reports each one's median wall and CPU time (user +
// system from the child's rusage) and their ratios. It fails when pi's
// median wall time is more than startupLimit times hello's, measured over
// at least 20 rounds (-benchtime 20x or more): packages that put work in
// init (see internal/archtest's TestNoInitWork) make it grow. With PI_OLD
// set to another pi binary, its `pi version` runs in every round too
// (old-… metrics): before and after in one run.
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	build := func(name, pkg string) string {
		out := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if o, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("build %s: %v\n%s", pkg, err, o)
		}
		return out
	}
	pi := build("pi", "./cmd/pi")
	hello := build("hello", "./bench/testdata/hello")
	type sample struct{ wall, cpu time.Duration }
	runs := map[string][]sample{}
	run := func(label, bin string, args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "PI_HOME="+filepath.Join(dir, ".pi"))
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", label, err, out)
		}
		wall := time.Since(start)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		runs[label] = append(runs[label], sample{wall, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())})
	}
	old := os.Getenv("PI_OLD")
	round := func() {
		run("hello", hello)
		run("pi", pi, "version")
		if old != "" {
			run("old-pi", old, "version")
		}
	}
	round() // warm the page cache
	clear(runs)
	b.ResetTimer()
	for range b.N {
		round()
	}
	b.StopTimer()
	median := func(label string, f func(sample) time.Duration) float64 {
		var v []time.Duration
		for _, s := range runs[label] {
			v = append(v, f(s))
		}
		slices.Sort(v)
		return float64(v[len(v)/2].Microseconds()) / 1000
	}
	wall := func(s sample) time.Duration { return s.wall }
	cpu := func(s sample) time.Duration { return s.cpu }
	b.ReportMetric(median("hello", wall), "hello-wall-ms")
	b.ReportMetric(median("pi", wall), "pi-wall-ms")
	b.ReportMetric(median("hello", cpu), "hello-cpu-ms")
	b.ReportMetric(median("pi", cpu), "pi-cpu-ms")
	ratio := median("pi", wall) / median("hello", wall)
	b.ReportMetric(ratio, "x-hello-wall")
	b.ReportMetric(median("pi", cpu)/median("hello", cpu), "x-hello-cpu")
	if old != "" {
		b.ReportMetric(median("old-pi", wall), "old-pi-wall-ms")
		b.ReportMetric(median("old-pi", cpu), "old-pi-cpu-ms")
		b.ReportMetric(median("old-pi", wall)/median("hello", wall), "old-x-hello-wall")
		b.ReportMetric(median("old-pi", cpu)/median("hello", cpu), "old-x-hello-cpu")
	}
	if b.N >= 20 && ratio > startupLimit {
		b.Errorf("pi version takes %.2f× a hello world's wall time (median of %d interleaved runs), over the %.1f× guard", ratio, b.N, startupLimit)
	}
}
