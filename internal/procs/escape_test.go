//go:build linux

package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/cgroup"
	"github.com/pi-go/pi/internal/proctest"
)

// withoutCgroups makes the test's bash calls run without cgroups (the
// fallback: sessions, the tag scan and orphans) and restores the state
// after. Not for parallel tests.
func withoutCgroups(t *testing.T) {
	t.Helper()
	cg := &bashTracker.cg
	cg.Lock()
	was, why := cg.off, cg.why
	cg.off, cg.why = true, errors.New("cgroups off for a test")
	cg.Unlock()
	t.Cleanup(func() {
		cg.Lock()
		cg.off, cg.why = was, why
		cg.Unlock()
	})
}

// processModes runs f with cgroups (where this machine has them) and
// without.
func processModes(t *testing.T, f func(t *testing.T, cgroups bool)) {
	t.Run("cgroup", func(t *testing.T) {
		if _, err := cgroup.Detect(); err != nil {
			t.Skipf("no cgroups here: %v", err)
		}
		if on, why := bashCgroupState(); !on {
			t.Skipf("bash calls run without cgroups: %v", why)
		}
		f(t, true)
	})
	t.Run("fallback", func(t *testing.T) {
		withoutCgroups(t)
		f(t, false)
	})
}

// escapeCase starts the escape helper in the background of a bash command;
// ready is how many of its processes log "ready" once it is out.
type escapeCase struct {
	name  string
	start func(h proctest.Helper, log string) string // log exists (empty)
	ready int
	check func(t *testing.T, log string) // what the log must show, if anything
	// leavesCgroup: it moves out of the call's cgroup; leavesSession: it
	// leaves the call's session and drops the tag. Then only the orphan
	// rule finds it, which needs no other call running.
	leavesCgroup, leavesSession bool
}

// alone reports whether the case needs the process to itself.
func (c escapeCase) alone(cgroups bool) bool {
	if cgroups {
		return c.leavesCgroup
	}
	return c.leavesSession || c.leavesCgroup
}

func escapeCases(t *testing.T) []escapeCase {
	pgrp := syscall.Getpgrp()
	cases := []escapeCase{
		{name: "setsid", ready: 1, start: func(h proctest.Helper, log string) string {
			return fmt.Sprintf("setsid %s %s log:%s sleep &", h.Path, h.Token, log)
		}},
		{name: "double fork into pi's process group with a clean environment", ready: 1,
			start: func(h proctest.Helper, log string) string {
				return fmt.Sprintf("%s %s log:%s fork fork setpgid:%d envclear sleep &", h.Path, h.Token, log, pgrp)
			},
			check: func(t *testing.T, log string) {
				// The call's own session makes pi's group unreachable.
				if want := fmt.Sprintf("setpgid:%d error EPERM", pgrp); !strings.Contains(readLog(log), want) {
					t.Errorf("the helper joined pi's process group; log:\n%s", readLog(log))
				}
			}},
		{name: "env -i, new session, double fork", ready: 1, leavesSession: true, start: func(h proctest.Helper, log string) string {
			return fmt.Sprintf("env -i %s %s log:%s fork fork setsid sleep &", h.Path, h.Token, log)
		}},
		{name: "nohup and disown", ready: 1, start: func(h proctest.Helper, log string) string {
			return fmt.Sprintf("nohup %s %s log:%s sleep >/dev/null 2>&1 & disown;", h.Path, h.Token, log)
		}},
		{name: "daemon that closes its descriptors", ready: 1, leavesSession: true, start: func(h proctest.Helper, log string) string {
			return fmt.Sprintf("%s %s log:%s fork setsid fork closefds envclear sleep &", h.Path, h.Token, log)
		}},
		{name: "ignores SIGTERM after escaping", ready: 1, leavesSession: true, start: func(h proctest.Helper, log string) string {
			return fmt.Sprintf("%s %s log:%s fork fork setsid envclear ignoreterm sleep &", h.Path, h.Token, log)
		}},
		{name: "fork bomb that restarts what dies", ready: 8, start: func(h proctest.Helper, log string) string {
			return fmt.Sprintf("%s %s bomb:3 log:%s ignoreterm sleep &", h.Path, h.Token, log)
		}},
	}
	if p, err := cgroup.Detect(); err == nil {
		cases = append(cases, escapeCase{name: "moves itself to pi's cgroup", ready: 1, leavesCgroup: true,
			start: func(h proctest.Helper, log string) string {
				return fmt.Sprintf("%s %s log:%s fork fork setsid envclear cgroup:%s sleep &", h.Path, h.Token, log, p.Dir())
			},
			check: func(t *testing.T, log string) {
				t.Logf("moving out of the call's cgroup: %s", lastField(readLog(log), "cgroup:"))
			}})
	}
	return cases
}

func emptyLog(t *testing.T) string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return log
}

func readLog(path string) string { b, _ := os.ReadFile(path); return string(b) }

// lastField is the rest of the first log line that contains key.
func lastField(log, key string) string {
	for _, line := range strings.Split(log, "\n") {
		if i := strings.Index(line, key); i >= 0 {
			return line[i:]
		}
	}
	return "(not logged)"
}

// waitReady is the shell fragment that waits until n helpers logged ready.
func waitReady(log string, n int) string {
	return fmt.Sprintf(` while [ "$(grep -c ' ready' %s)" -lt %d ]; do sleep 0.01; done; echo ready;`, log, n)
}

// assertNoneLeft checks that no process of the helper is left, and no
// zombie either when the calls ran in cgroups. Without cgroups, a process
// that died before any scan saw it alive (the middle of a double fork) can
// stay a zombie of pi until pi exits: pi cannot tell it from a child that
// other code still waits for.
func assertNoneLeft(t *testing.T, h proctest.Helper, cgroups bool) {
	t.Helper()
	for _, p := range proctest.Find(h.Token) {
		if p.State == 'Z' && !cgroups && p.PPid == os.Getpid() {
			t.Logf("zombie of pi left until pi exits: %v", p)
			continue
		}
		t.Errorf("left behind: %v", p)
	}
}

// TestBashEscapes tries every way out of a call, in both process-control
// modes, against each way a call ends: its timeout, its cancellation, and pi
// exiting (KillAllBash) after the call returned. Not parallel: KillAllBash
// and the orphan rule need the process to themselves. The timeouts of the
// cases that stay in their cgroup (or, without cgroups, in their session or
// with their tag) run at the same time.
func TestBashEscapes(t *testing.T) {
	processModes(t, func(t *testing.T, cgroups bool) {
		cases := escapeCases(t)
		t.Run("timeout", func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					if !c.alone(cgroups) {
						t.Parallel()
					}
					h := proctest.Escape(t)
					log := emptyLog(t)
					start := time.Now()
					r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(),
						map[string]any{"command": c.start(h, log) + waitReady(log, c.ready) + " sleep 30", "timeout": 1.5}, nil)
					took := time.Since(start)
					got := r.Text()
					if !strings.HasPrefix(got, "ready\n") || !strings.HasSuffix(got, "\n\nCommand timed out after 1.5 seconds") {
						t.Fatalf("text = %q; log:\n%s", got, readLog(log))
					}
					if took > 5*time.Second {
						t.Errorf("the call took %v", took)
					}
					assertNoneLeft(t, h, cgroups)
					if c.check != nil {
						c.check(t, log)
					}
				})
			}
		})
		t.Run("abort", func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					h := proctest.Escape(t)
					log := emptyLog(t)
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					go func() {
						for ctx.Err() == nil && proctest.Lines(log, " ready") < c.ready {
							time.Sleep(5 * time.Millisecond)
						}
						cancel()
					}()
					r := bashCall(t, ctx, BashOptions{}, t.TempDir(),
						map[string]any{"command": c.start(h, log) + " sleep 30", "timeout": 60}, nil)
					if got := r.Text(); !strings.HasSuffix(got, "Command aborted") {
						t.Fatalf("text = %q", got)
					}
					if n := proctest.Lines(log, " ready"); n < c.ready {
						t.Fatalf("only %d of %d helpers were ready; log:\n%s", n, c.ready, readLog(log))
					}
					assertNoneLeft(t, h, cgroups)
				})
			}
		})
		t.Run("pi exits", func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					h := proctest.Escape(t)
					log := emptyLog(t)
					r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(),
						map[string]any{"command": c.start(h, log) + waitReady(log, c.ready), "timeout": 60}, nil)
					if got := r.Text(); got != "ready\n" {
						t.Fatalf("text = %q; log:\n%s", got, readLog(log))
					}
					if len(proctest.Alive(h.Token)) == 0 {
						t.Fatalf("nothing of the helper runs after the call; log:\n%s", readLog(log))
					}
					KillAllBash()
					assertNoneLeft(t, h, cgroups)
					if cgroups {
						if on, why := bashCgroupState(); !on {
							t.Errorf("cgroups got switched off: %v", why)
						}
					}
				})
			}
		})
	})
}

// TestBashRetriesWithoutCgroup: when the shell cannot be started inside its
// cgroup (here: a group the kernel refuses processes in, a child of a
// threaded cgroup), the call still runs, without a cgroup, and cgroups are
// off from then on. Not parallel: it swaps the calls' parent group.
func TestBashRetriesWithoutCgroup(t *testing.T) {
	p, err := cgroup.Detect()
	if err != nil {
		t.Skipf("no cgroups here: %v", err)
	}
	outer, err := p.New(fmt.Sprintf("pi-test-%d-retry", os.Getpid()))
	if err != nil {
		t.Skipf("cannot create a cgroup: %v", err)
	}
	defer outer.Remove()
	threaded, err := outer.New("threaded")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(threaded.Dir(), "cgroup.type"), []byte("threaded"), 0); err != nil {
		t.Skipf("cannot make a threaded cgroup: %v", err)
	}
	cg := &bashTracker.cg
	cg.Lock()
	saved := struct {
		root  *cgroup.Group
		calls map[*cgroup.Group]bool
		off   bool
		why   error
	}{cg.root, cg.calls, cg.off, cg.why}
	cg.root, cg.calls, cg.off, cg.why = threaded, map[*cgroup.Group]bool{}, false, nil
	cg.Unlock()
	defer func() {
		cg.Lock()
		cg.root, cg.calls, cg.off, cg.why = saved.root, saved.calls, saved.off, saved.why
		cg.Unlock()
	}()

	r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": "echo ran; exit 3"}, nil)
	if got := r.Text(); got != "ran\n\n\nCommand exited with code 3" {
		t.Errorf("text = %q", got)
	}
	on, why := bashCgroupState()
	if on || why == nil || !strings.Contains(why.Error(), "start a shell in a cgroup") {
		t.Errorf("cgroups on = %v (%v), want off after the failed start", on, why)
	}
	t.Logf("why: %v", why)
	if names, _ := os.ReadDir(threaded.Dir()); len(dirsOf(names)) != 0 {
		t.Errorf("the unusable call group was left: %v", names)
	}
	// Off from now on: the next call does not try again.
	r = bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": "echo again"}, nil)
	if got := r.Text(); got != "again\n" {
		t.Errorf("text = %q", got)
	}
}

func dirsOf(ents []os.DirEntry) []string {
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestBashSparesPiSessionOrphans: an orphan of other code of pi (a child
// that pi started outside bash and that double-forked) is in pi's session,
// where no process of a call can be, so neither a call's timeout nor
// KillAllBash takes it, even while no other call runs. Not parallel: the
// orphan rule applies only to a call that runs alone.
func TestBashSparesPiSessionOrphans(t *testing.T) {
	prepareProcs() // pi is a subreaper: the orphan is re-parented to it
	sl := sleeper(t)
	name := filepath.Base(sl)
	if out, err := exec.Command("sh", "-c", sl+" 600 >/dev/null 2>&1 &").CombinedOutput(); err != nil {
		t.Fatalf("start the orphan: %v %s", err, out)
	}
	var orphan int
	deadline := time.Now().Add(5 * time.Second)
	for orphan == 0 {
		for _, pid := range procsNamed(name) {
			var buf [1024]byte
			if p, ok := readStat(pid, buf[:]); ok && p.ppid == os.Getpid() && !p.dead() {
				orphan = pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no orphan of pi named %s", name)
		}
		time.Sleep(5 * time.Millisecond)
	}
	r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": "sleep 30", "timeout": 0.3}, nil)
	if got := r.Text(); got != "Command timed out after 0.3 seconds" {
		t.Fatalf("text = %q", got)
	}
	KillAllBash()
	if err := syscall.Kill(orphan, 0); err != nil {
		t.Errorf("pi's own orphan %d was killed: %v", orphan, err)
	}
}
