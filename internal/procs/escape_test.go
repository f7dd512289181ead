//go:build linux

package procs

import (
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
	"github.com/pi-go/pi/internal/testkit/proc"
)

// processModes runs f with cgroups (where this machine has them) and
// without (the fallback: sessions, the tag scan and orphans); newSet makes
// a Set of the mode, closed when the test ends.
func processModes(t *testing.T, f func(t *testing.T, newSet func(t *testing.T) *Set, cgroups bool)) {
	t.Run("cgroup", func(t *testing.T) {
		if _, err := cgroup.Detect(); err != nil {
			t.Skipf("no cgroups here: %v", err)
		}
		f(t, func(t *testing.T) *Set {
			s := NewSet()
			t.Cleanup(s.Close)
			return s
		}, true)
	})
	t.Run("fallback", func(t *testing.T) {
		f(t, func(t *testing.T) *Set {
			s := NewSet()
			s.disableCgroups(errors.New("cgroups off for a test"))
			t.Cleanup(s.Close)
			return s
		}, false)
	})
}

// shellCall is one call of a Set running `bash -c COMMAND`, its output in a
// file.
type shellCall struct {
	cmd  *exec.Cmd
	call *Call
	out  string
	done chan struct{}
	err  error
}

// startCall starts command as a call of s.
func startCall(t *testing.T, s *Set, command string) *shellCall {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd, call, err := s.Start(func() *exec.Cmd {
		c := exec.Command("/bin/bash", "-c", command)
		c.Stdout, c.Stderr = f, f
		return c
	})
	if err != nil {
		t.Fatalf("start %q: %v", command, err)
	}
	c := &shellCall{cmd: cmd, call: call, out: out, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c
}

// wait waits for the shell, then tells the call it exited, as the bash
// tool does; it returns the shell's exit error.
func (c *shellCall) wait() error {
	<-c.done
	c.call.Exited()
	return c.err
}

// terminate ends the call as a timeout or a cancellation does.
func (c *shellCall) terminate(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	c.call.Terminate(500 * time.Millisecond)
	if err := c.wait(); err == nil {
		t.Errorf("the shell exited normally; want it killed (output %q)", readLog(c.out))
	}
	return time.Since(start)
}

// escapeCase starts the escape helper in the background of a bash command;
// ready is how many of its processes log "ready" once it is out.
type escapeCase struct {
	name  string
	start func(h proc.Helper, log string) string // log exists (empty)
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
		{name: "setsid", ready: 1, start: func(h proc.Helper, log string) string {
			return fmt.Sprintf("setsid %s %s log:%s sleep &", h.Path, h.Token, log)
		}},
		{name: "double fork into pi's process group with a clean environment", ready: 1,
			start: func(h proc.Helper, log string) string {
				return fmt.Sprintf("%s %s log:%s fork fork setpgid:%d envclear sleep &", h.Path, h.Token, log, pgrp)
			},
			check: func(t *testing.T, log string) {
				// The call's own session makes pi's group unreachable.
				if want := fmt.Sprintf("setpgid:%d error EPERM", pgrp); !strings.Contains(readLog(log), want) {
					t.Errorf("the helper joined pi's process group; log:\n%s", readLog(log))
				}
			}},
		{name: "env -i, new session, double fork", ready: 1, leavesSession: true, start: func(h proc.Helper, log string) string {
			return fmt.Sprintf("env -i %s %s log:%s fork fork setsid sleep &", h.Path, h.Token, log)
		}},
		{name: "nohup and disown", ready: 1, start: func(h proc.Helper, log string) string {
			return fmt.Sprintf("nohup %s %s log:%s sleep >/dev/null 2>&1 & disown;", h.Path, h.Token, log)
		}},
		{name: "daemon that closes its descriptors", ready: 1, leavesSession: true, start: func(h proc.Helper, log string) string {
			return fmt.Sprintf("%s %s log:%s fork setsid fork closefds envclear sleep &", h.Path, h.Token, log)
		}},
		{name: "ignores SIGTERM after escaping", ready: 1, leavesSession: true, start: func(h proc.Helper, log string) string {
			return fmt.Sprintf("%s %s log:%s fork fork setsid envclear ignoreterm sleep &", h.Path, h.Token, log)
		}},
		{name: "fork bomb that restarts what dies", ready: 8, start: func(h proc.Helper, log string) string {
			return fmt.Sprintf("%s %s bomb:3 log:%s ignoreterm sleep &", h.Path, h.Token, log)
		}},
	}
	if p, err := cgroup.Detect(); err == nil {
		cases = append(cases, escapeCase{name: "moves itself to pi's cgroup", ready: 1, leavesCgroup: true,
			start: func(h proc.Helper, log string) string {
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
func assertNoneLeft(t *testing.T, h proc.Helper, cgroups bool) {
	t.Helper()
	for _, p := range proc.Find(h.Token) {
		if p.State == 'Z' && !cgroups && p.PPid == os.Getpid() {
			t.Logf("zombie of pi left until pi exits: %v", p)
			continue
		}
		t.Errorf("left behind: %v", p)
	}
}

// TestEscapes tries every way out of a call, in both process-control
// modes, against each way a call ends: terminated while it runs (a timeout
// or a cancellation of the bash tool), and its Set closed after the call
// returned (pi exiting). Not parallel: the orphan rule needs the process to
// itself. The cases that stay in their cgroup (or, without cgroups, in
// their session or with their tag) are terminated at the same time.
func TestEscapes(t *testing.T) {
	processModes(t, func(t *testing.T, newSet func(t *testing.T) *Set, cgroups bool) {
		cases := escapeCases(t)
		shared := newSet(t)
		t.Run("terminate", func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					if !c.alone(cgroups) {
						t.Parallel()
					}
					h := proc.Escape(t)
					log := emptyLog(t)
					call := startCall(t, shared, c.start(h, log)+waitReady(log, c.ready)+" sleep 30")
					proc.WaitLog(t, call.out, "ready", 1, 10*time.Second)
					if took := call.terminate(t); took > 3*time.Second {
						t.Errorf("terminate took %v", took)
					}
					assertNoneLeft(t, h, cgroups)
					if c.check != nil {
						c.check(t, log)
					}
				})
			}
		})
		t.Run("set closed", func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					s := newSet(t)
					h := proc.Escape(t)
					log := emptyLog(t)
					call := startCall(t, s, c.start(h, log)+waitReady(log, c.ready))
					if err := call.wait(); err != nil {
						t.Fatalf("shell: %v; output %q; log:\n%s", err, readLog(call.out), readLog(log))
					}
					if len(proc.Alive(h.Token)) == 0 {
						t.Fatalf("nothing of the helper runs after the call; log:\n%s", readLog(log))
					}
					start := time.Now()
					s.Close()
					if took := time.Since(start); took > 3*time.Second {
						t.Errorf("Close took %v", took)
					}
					assertNoneLeft(t, h, cgroups)
					if on, why := s.Cgroups(); cgroups && !on {
						t.Errorf("cgroups got switched off: %v", why)
					}
				})
			}
		})
		if on, why := shared.Cgroups(); cgroups && !on {
			t.Errorf("cgroups got switched off: %v", why)
		}
	})
}

// TestStartRetriesWithoutCgroup: when the shell cannot be started inside
// its cgroup (here: a group the kernel refuses processes in, a child of a
// threaded cgroup), the call still runs, without a cgroup, and the Set's
// cgroups are off from then on.
func TestStartRetriesWithoutCgroup(t *testing.T) {
	t.Parallel()
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
	s := NewSet()
	s.cg.Lock()
	s.cg.root, s.cg.calls = threaded, map[*cgroup.Group]bool{}
	s.cg.Unlock()
	defer func() {
		s.cg.Lock()
		s.cg.root, s.cg.calls = nil, nil
		s.cg.Unlock()
		s.Close()
	}()

	c := startCall(t, s, "echo ran; exit 3")
	var ee *exec.ExitError
	if err := c.wait(); !errors.As(err, &ee) || ee.ExitCode() != 3 || readLog(c.out) != "ran\n" {
		t.Errorf("shell: %v, output %q; want exit 3 after ran", err, readLog(c.out))
	}
	on, why := s.Cgroups()
	if on || why == nil || !strings.Contains(why.Error(), "start a shell in a cgroup") {
		t.Errorf("cgroups on = %v (%v), want off after the failed start", on, why)
	}
	t.Logf("why: %v", why)
	if names, _ := os.ReadDir(threaded.Dir()); len(dirsOf(names)) != 0 {
		t.Errorf("the unusable call group was left: %v", names)
	}
	// Off from now on: the next call does not try again.
	c = startCall(t, s, "echo again")
	if err := c.wait(); err != nil || readLog(c.out) != "again\n" {
		t.Errorf("shell: %v, output %q", err, readLog(c.out))
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

// TestSparesPiSessionOrphans: an orphan of other code of pi (a child that
// pi started outside any call and that double-forked) is in pi's session,
// where no process of a call can be, so neither a call's termination nor
// closing its Set takes it, even while no other call runs. Not parallel:
// the orphan rule applies only to a call that runs alone.
func TestSparesPiSessionOrphans(t *testing.T) {
	sl := proc.Sleeper(t)
	name := filepath.Base(sl)
	if out, err := exec.Command("sh", "-c", sl+" 600 >/dev/null 2>&1 &").CombinedOutput(); err != nil {
		t.Fatalf("start the orphan: %v %s", err, out)
	}
	var orphan int
	deadline := time.Now().Add(5 * time.Second)
	for orphan == 0 {
		for _, pid := range proc.Pids(name) {
			var buf [1024]byte
			if p, ok := readStat(pid, buf[:]); ok && p.ppid == os.Getpid() && !p.dead() {
				orphan = pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no orphan of pi named %s (is the test binary a subreaper?)", name)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s := NewSet()
	c := startCall(t, s, "echo started; sleep 30")
	proc.WaitLog(t, c.out, "started", 1, 10*time.Second)
	c.terminate(t)
	s.Close()
	if err := syscall.Kill(orphan, 0); err != nil {
		t.Errorf("pi's own orphan %d was killed: %v", orphan, err)
	}
}
