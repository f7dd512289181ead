//go:build linux

package procs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-go/pi/internal/testkit/proc"
)

// waitCount waits until n processes named name run (or fails after 10s).
func waitCount(t *testing.T, name string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(proc.Pids(name)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d processes named %s, want %d", len(proc.Pids(name)), name, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitGone waits until no process named name is left (zombies included),
// or fails the test after 10 s.
func waitGone(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(proc.Pids(name)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes named %s still there: %v", name, proc.Find(name))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// backgroundCommands leave sl running in the background: a plain
// background job, setsid, a double fork into a new session (all keep the
// tag) and, when scrubbed, env -i with setsid in a double fork (no tag, own
// session, an orphan: only the cgroup or the orphan rule finds it).
func backgroundCommands(sl string, scrubbed bool) []string {
	cmds := []string{
		sl + " 600 & echo one",
		"setsid " + sl + " 600 & echo two",
		"(setsid sh -c '" + sl + " 600 & true' &); echo three",
	}
	if scrubbed {
		cmds = append(cmds, "(env -i setsid "+sl+" 600 &); echo four")
	}
	return cmds
}

// TestSetClose: closing a Set kills what its calls left running, in about
// a second, and nothing else: a child the test started itself is still
// running, and still the test's to reap. Not parallel: the orphan rule of
// Close needs no other Set's call running.
func TestSetClose(t *testing.T) {
	sl := proc.Sleeper(t)
	name := filepath.Base(sl)
	s := NewSet()
	defer s.Close()
	cmds := backgroundCommands(sl, true)
	for _, c := range cmds {
		if err := startCall(t, s, c).wait(); err != nil {
			t.Fatalf("%q: %v", c, err)
		}
	}
	waitCount(t, name, len(cmds))
	other := exec.Command(sl, "600")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.Close()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close took %v", took)
	}
	if pids := proc.Pids(name); len(pids) != 1 || pids[0] != other.Process.Pid {
		t.Errorf("after Close: %v, want only the process no call started (%d)", pids, other.Process.Pid)
	}
	_ = other.Process.Kill()
	if err := other.Wait(); err == nil || err.Error() != "signal: killed" {
		t.Errorf("the unrelated child was reaped by someone else: %v", err)
	}
}

// TestSetCloseSparesOtherSets: two Sets (two runtimes of one program), each
// with a call still running and calls that left processes in the
// background; closing one ends all of its processes and none of the
// other's, which still runs its call; then closing the other ends its
// processes. In both process-control modes; the orphan that dropped its tag
// and left its session is one of them only with cgroups: without, it is
// nobody's while another Set's call runs (docs/tools.md). Not parallel: the
// orphan rule.
func TestSetCloseSparesOtherSets(t *testing.T) {
	processModes(t, func(t *testing.T, newSet func(t *testing.T) *Set, cgroups bool) {
		a, b := newSet(t), newSet(t)
		slA, slB := proc.Sleeper(t), proc.Sleeper(t)
		nameA, nameB := filepath.Base(slA), filepath.Base(slB)
		var running []*shellCall
		for _, x := range []struct {
			s  *Set
			sl string
		}{{a, slA}, {b, slB}} {
			for _, c := range backgroundCommands(x.sl, cgroups) {
				if err := startCall(t, x.s, c).wait(); err != nil {
					t.Fatalf("%q: %v", c, err)
				}
			}
			running = append(running, startCall(t, x.s, "echo started; "+x.sl+" 600"))
		}
		want := len(backgroundCommands("", cgroups)) + 1
		waitCount(t, nameA, want)
		waitCount(t, nameB, want)

		a.Close()
		// SIGKILL is delivered and reaped asynchronously: the processes
		// must be gone soon after Close, observed in /proc.
		waitGone(t, nameA)
		select {
		case <-running[0].done:
		case <-time.After(10 * time.Second):
			t.Errorf("A's running shell was not killed")
		}
		running[0].wait()
		if got := len(proc.Pids(nameB)); got != want {
			t.Errorf("closing A killed B's processes: %d of %d left", got, want)
		}
		select {
		case <-running[1].done:
			t.Fatalf("closing A killed B's running shell: %v", running[1].err)
		default:
		}
		if c, _, err := a.Start(func() *exec.Cmd { return exec.Command("true") }); !errors.Is(err, ErrClosed) {
			t.Errorf("Start after Close: %v %v, want ErrClosed", c, err)
		}
		if cmd, call, err := b.Start(func() *exec.Cmd { return exec.Command("true") }); err != nil {
			t.Errorf("B cannot start after A closed: %v", err)
		} else {
			_ = cmd.Wait()
			call.Exited()
		}

		b.Close()
		running[1].wait()
		if pids := proc.Pids(nameB); len(pids) != 0 {
			t.Errorf("after closing B, B's processes remain: %v", pids)
		}
	})
}

// TestCloseRacesStart: calls started while the Set closes either start
// before it kills (and are killed) or fail with ErrClosed; none survives.
func TestCloseRacesStart(t *testing.T) {
	t.Parallel()
	sl := proc.Sleeper(t)
	s := NewSet()
	type started struct {
		done chan error
	}
	results := make(chan started, 1000)
	stop := make(chan struct{})
	for range 4 {
		go func() {
			for range 50 {
				cmd, call, err := s.Start(func() *exec.Cmd { return exec.Command(sl, "600") })
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						t.Errorf("start: %v", err)
					}
					stop <- struct{}{}
					return
				}
				done := make(chan error, 1)
				go func() {
					err := cmd.Wait()
					call.Exited()
					done <- err
				}()
				results <- started{done}
			}
			stop <- struct{}{}
		}()
	}
	waitCount(t, filepath.Base(sl), 8)
	s.Close()
	for range 4 {
		<-stop
	}
	close(results)
	n := 0
	for r := range results {
		n++
		select {
		case err := <-r.done:
			if err == nil {
				t.Errorf("a call exited normally; want killed")
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("a call started before Close still runs 5s after it")
		}
	}
	if left := proc.Pids(filepath.Base(sl)); len(left) != 0 {
		t.Errorf("%d calls started, %v left", n, left)
	}
}

// BenchmarkProcScan is one scan of /proc as the process control does it:
// reading the environment of every process (worst case) or only of those
// started since this process (what Set.Close does).
func BenchmarkProcScan(b *testing.B) {
	marker := []byte("\x00" + MarkerEnv + "=none\x00")
	for _, c := range []struct {
		name  string
		since uint64
	}{{"every environment", 0}, {"since pi started", startTicks(os.Getpid())}} {
		b.Run(c.name, func(b *testing.B) {
			m := newMatcher(nil, map[int]bool{}, marker, c.since, -1)
			b.ReportMetric(float64(len(scanProcs())), "procs")
			for i := 0; i < b.N; i++ {
				m.cache = nil
				findTargets(scanProcs(), m)
			}
		})
	}
}

// BenchmarkStartCgroup is the cost of one call of `true` (start, wait,
// the scan after it) with the call's cgroup (created, the shell started in
// it, emptied check, removed) and without (sessions and the tag scan
// only): the difference is what a cgroup costs per call.
func BenchmarkStartCgroup(b *testing.B) {
	run := func(b *testing.B, s *Set) {
		for i := 0; i < b.N; i++ {
			cmd, call, err := s.Start(func() *exec.Cmd { return exec.Command("true") })
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
			call.Exited()
		}
	}
	b.Run("cgroup", func(b *testing.B) {
		s := NewSet()
		defer s.Close()
		if on, why := s.Cgroups(); !on {
			b.Skipf("no cgroups: %v", why)
		}
		run(b, s)
	})
	b.Run("no cgroup", func(b *testing.B) {
		s := NewSet()
		defer s.Close()
		s.disableCgroups(errors.New("off for a benchmark"))
		run(b, s)
	})
}

// waitTickPast waits until the boot clock, read from /proc/uptime in the
// clock ticks (1/100 s) that /proc/PID/stat start times use, is past tick.
// A bounded poll on that observable: nothing else says when a tick passed.
func waitTickPast(t *testing.T, tick uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/uptime")
		if err != nil {
			t.Fatal(err)
		}
		var up float64
		if _, err := fmt.Sscanf(string(b), "%f", &up); err != nil {
			t.Fatalf("/proc/uptime %q: %v", b, err)
		}
		if uint64(up*100) > tick+1 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("the clock did not pass tick %d in 5 s", tick)
}

// TestCloseTakesNoOlderOrphans: an orphan that dropped its tag and left
// its session, left by a call of Set A, is nobody's but A's to end: closing
// a Set B that never ran a call, or one whose calls all started after the
// orphan did, leaves it running, also without cgroups and with no call
// running; closing A ends it. Not parallel: the orphan rule.
func TestCloseTakesNoOlderOrphans(t *testing.T) {
	processModes(t, func(t *testing.T, newSet func(t *testing.T) *Set, cgroups bool) {
		sl := proc.Sleeper(t)
		name := filepath.Base(sl)
		a := newSet(t)
		if err := startCall(t, a, "(env -i setsid "+sl+" 600 &); echo left").wait(); err != nil {
			t.Fatal(err)
		}
		waitCount(t, name, 1)

		// Start times are in clock ticks: the later Set's first call must
		// start in a later tick than the orphan, or "started after" is
		// undecidable.
		waitTickPast(t, startTicks(proc.Pids(name)[0]))
		unused := newSet(t)
		unused.Close()
		if n := len(proc.Pids(name)); n != 1 {
			t.Fatalf("closing a Set that never ran a call ended another's orphan (%d left)", n)
		}
		later := newSet(t)
		if err := startCall(t, later, "true").wait(); err != nil {
			t.Fatal(err)
		}
		later.Close()
		if n := len(proc.Pids(name)); n != 1 {
			t.Fatalf("closing a Set whose calls started after the orphan ended it (%d left)", n)
		}
		a.Close()
		if left := proc.Pids(name); len(left) != 0 {
			t.Errorf("closing A left its orphan: %v", left)
		}
	})
}

// TestOwnChildrenAreNotOrphans: a child the program starts itself in a
// session of its own while a call runs (an MCP server, an extension's exec)
// looks exactly like an orphan the call left. The call's clean-up takes the
// plain one (so the test can fail) and spares the one StartOwn marked.
func TestOwnChildrenAreNotOrphans(t *testing.T) {
	processModes(t, func(t *testing.T, newSet func(t *testing.T) *Set, cgroups bool) {
		s := newSet(t)
		call := startCall(t, s, "echo started; sleep 600")
		proc.WaitLog(t, call.out, "started", 1, 10*time.Second)
		ownSl, plainSl := proc.Sleeper(t), proc.Sleeper(t)
		own := exec.Command(ownSl, "600")
		own.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		release, err := StartOwn(func() (int, error) {
			if err := own.Start(); err != nil {
				return 0, err
			}
			return own.Process.Pid, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		plain := exec.Command(plainSl, "600")
		plain.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := plain.Start(); err != nil {
			t.Fatal(err)
		}
		call.terminate(t)
		// The plain child was taken for the call's orphan: killed, and
		// reaped by its parent here. (If it was not, the test proves
		// nothing: fail instead of waiting out its sleep.)
		plainDone := make(chan error, 1)
		go func() { plainDone <- plain.Wait() }()
		select {
		case err := <-plainDone:
			if err == nil {
				t.Errorf("the plain child exited by itself; the test proves nothing")
			}
		case <-time.After(10 * time.Second):
			_ = plain.Process.Kill()
			<-plainDone
			t.Fatalf("the plain child was not taken for an orphan of the call; the test proves nothing")
		}
		if n := len(proc.Alive(filepath.Base(ownSl))); n != 1 {
			t.Errorf("the program's own child was killed by a call's clean-up (%d alive)", n)
		}
		_ = own.Process.Kill()
		_ = own.Wait()
		release()
	})
}

// BenchmarkCallBookkeeping is the bookkeeping after one call of `true`
// (Call.Exited: what the call left running, reaping, the emptied cgroups;
// the start and the wait are not timed) with no extra process on the host
// and with 2,000 idle `sleep` processes that are not pi's: "tree" walks
// pi's own descendants (what Exited does; "tree-nocgroup" the same for a
// Set without cgroups), "scan" lists all of /proc (what it did before, and
// still does without the subreaper).
func BenchmarkCallBookkeeping(b *testing.B) {
	for _, extra := range []int{0, 2000} {
		b.Run(fmt.Sprintf("host+%d", extra), func(b *testing.B) {
			if extra > 0 {
				idleHostProcesses(b, extra)
			}
			for _, mode := range []struct {
				name           string
				scan, nocgroup bool
			}{{"tree", false, false}, {"tree-nocgroup", false, true}, {"scan", true, false}} {
				b.Run(mode.name, func(b *testing.B) {
					fullScan = mode.scan
					defer func() { fullScan = false }()
					s := NewSet()
					defer s.Close()
					if mode.nocgroup {
						s.disableCgroups(errors.New("off for a benchmark"))
					}
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						cmd, call, err := s.Start(func() *exec.Cmd { return exec.Command("true") })
						if err != nil {
							b.Fatal(err)
						}
						if err := cmd.Wait(); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						call.Exited()
					}
					b.StopTimer()
					b.ReportMetric(float64(len(scanProcs())), "host-procs")
				})
			}
		})
	}
}

// idleHostProcesses starts n `sleep` processes that are not descendants of
// this process (their parent, a shell in a session of its own, is
// re-parented to init or a subreaper above us: the subreaper flag is off
// while it starts) and kills them when b ends.
func idleHostProcesses(b *testing.B, n int) {
	b.Helper()
	pidFile := filepath.Join(b.TempDir(), "pids")
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0); err != nil {
		b.Fatal(err)
	}
	script := fmt.Sprintf(`(setsid sh -c 'i=0; while [ $i -lt %d ]; do sleep 600 & echo $! >> %s; i=$((i+1)); done; echo done >> %s; wait' </dev/null >/dev/null 2>&1 &)`, n, pidFile, pidFile)
	err := exec.Command("sh", "-c", script).Run()
	if err2 := BecomeSubreaper(); err2 != nil {
		b.Fatal(err2)
	}
	if err != nil {
		b.Fatal(err)
	}
	var pids []int
	b.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		text, _ := os.ReadFile(pidFile)
		if strings.HasSuffix(string(text), "done\n") {
			for _, f := range strings.Fields(string(text)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d idle processes not started in 60 s", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDescendantsMatchScan: the walk of pi's tree through the children
// files (what the bookkeeping after a call reads) finds the same processes
// below pi as a scan of all of /proc, orphans re-parented to pi included:
// calls leave background jobs, setsid daemons, a double-forked one without
// its tag and one below a shell that waits for it. Without the subreaper flag the walk refuses (the caller
// scans instead).
func TestDescendantsMatchScan(t *testing.T) {
	sl := proc.Sleeper(t)
	s := NewSet()
	defer s.Close()
	// The last one leaves a grandchild of pi: a shell waiting for it.
	for _, cmd := range append(backgroundCommands(sl, true), "sh -c '"+sl+" 600; true' & echo five") {
		if err := startCall(t, s, cmd).wait(); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	waitCount(t, filepath.Base(sl), 5)
	self := os.Getpid()
	below := func(procs []procInfo) map[int]bool {
		ppid := map[int]int{}
		for _, p := range procs {
			ppid[p.pid] = p.ppid
		}
		out := map[int]bool{}
		for _, p := range procs {
			for a, n := p.ppid, 0; a > 0 && n < 1000; a, n = ppid[a], n+1 {
				if a == self {
					out[p.pid] = true
					break
				}
			}
		}
		return out
	}
	tree, ok := descendants(self)
	if !ok {
		t.Skip("no children files in this kernel (CONFIG_PROC_CHILDREN)")
	}
	scan := scanProcs()
	got, want := below(tree), below(scan)
	for _, pid := range proc.Pids(filepath.Base(sl)) {
		if !want[pid] {
			t.Errorf("the scan does not see sleeper %d below pi", pid)
		}
	}
	// Processes started or ended between the two reads (the Go runtime
	// starts none) would differ; the test's own are long-lived.
	for pid := range want {
		if !got[pid] {
			t.Errorf("the tree misses %d, which the scan finds below pi", pid)
		}
	}
	for pid := range got {
		if !want[pid] {
			t.Errorf("the tree has %d, which the scan does not find below pi", pid)
		}
	}

	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	_, ok = descendants(self)
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Error("the walk ran without the subreaper flag; want a refusal")
	}
}
