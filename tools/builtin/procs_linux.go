//go:build linux

package builtin

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Process control on Linux.
//
// Every bash call runs its shell in a process group of its own, with a
// marker in its environment, PI_BASH_CALL=<instance>-<n>, that every process
// it starts inherits. pi becomes a child subreaper, so processes orphaned by a
// call (double forks, setsid daemons) are re-parented to pi instead of init.
// To stop a call, pi repeatedly scans /proc and signals every live process
// that carries the call's marker, is in the call's process group, or descends
// from one of those, until none is left; then it reaps the orphans that died
// as its children. KillAllBash does the same for every call of this pi
// process. A process that scrubs its environment, leaves the group and whose
// parent is gone before the scan (env -i setsid, double fork) is not found.

// bashTracker is the registry of what bash calls started.
var bashTracker = struct {
	once sync.Once
	mu   sync.Mutex
	// shells are the shell pids that exec.Cmd.Wait will reap; never reaped
	// here.
	shells map[int]bool
	// groups are the process groups of calls that may still have members.
	groups map[int]bool
	// seen are pids known to have been started by a bash call (found by a
	// scan); when they die as children of pi they are reaped here.
	seen map[int]bool
}{shells: map[int]bool{}, groups: map[int]bool{}, seen: map[int]bool{}}

// bashSysProcAttr puts the shell in a new process group.
func bashSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// prepareProcs makes pi a child subreaper, once.
func prepareProcs() {
	bashTracker.once.Do(func() {
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	})
}

// enlargePipe raises a pipe's capacity so that a command that prints fast
// blocks less often.
func enlargePipe(f *os.File) {
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, 1<<20)
}

// callProcs is the process side of one bash call.
type callProcs struct {
	pid    int // the shell, also the process group id
	marker []byte
}

// trackShell registers a started shell.
func trackShell(pid int, marker string) *callProcs {
	bashTracker.mu.Lock()
	bashTracker.shells[pid] = true
	bashTracker.groups[pid] = true
	bashTracker.mu.Unlock()
	return &callProcs{pid: pid, marker: []byte("\x00" + bashMarkerEnv + "=" + marker + "\x00")}
}

// terminate stops every process of the call: SIGTERM (and SIGCONT, so that
// stopped ones see it), then after grace, or as soon as all are gone,
// SIGKILL until none is left.
func (c *callProcs) terminate(grace time.Duration) {
	killMatching(c.matcher(), grace)
}

// shellExited is called after exec.Cmd.Wait reaped the shell: processes the
// call left running are remembered, so that they can be reaped when they die
// as pi's children, and dead ones are reaped.
func (c *callProcs) shellExited() {
	bashTracker.mu.Lock()
	delete(bashTracker.shells, c.pid)
	bashTracker.mu.Unlock()
	procs := scanProcs()
	live := findTargets(procs, c.matcher())
	bashTracker.mu.Lock()
	for _, p := range live {
		bashTracker.seen[p] = true
	}
	bashTracker.mu.Unlock()
	reapOrphans(procs)
}

// KillAllBash kills every live process started by any bash call of this pi
// process (the shells, their background jobs, and daemons that detached with
// setsid or a double fork but kept the call's environment marker), SIGTERM
// first and SIGKILL after a short grace, and reaps them. The CLI calls it when
// pi exits. It returns when they are gone, in about a second at most.
func KillAllBash() {
	prefix := []byte("\x00" + bashMarkerEnv + "=" + bashInstance + "-")
	bashTracker.mu.Lock()
	groups := make(map[int]bool, len(bashTracker.groups))
	for g := range bashTracker.groups {
		groups[g] = true
	}
	bashTracker.mu.Unlock()
	killMatching(&procMatcher{groups: groups, env: prefix}, 500*time.Millisecond)
}

// killMatching signals the matching processes and their descendants until
// none is alive, then reaps the orphans among them.
func killMatching(match *procMatcher, grace time.Duration) {
	killed := map[int]bool{}
	signalAll := func(pids []int, sig syscall.Signal) {
		for _, pid := range pids {
			killed[pid] = true
			_ = syscall.Kill(pid, sig)
			if sig == syscall.SIGTERM {
				_ = syscall.Kill(pid, syscall.SIGCONT)
			}
		}
	}
	termed := map[int]bool{}
	deadline := time.Now().Add(grace)
	for {
		targets := findTargets(scanProcs(), match)
		if len(targets) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for g := range match.groups {
				_ = syscall.Kill(-g, syscall.SIGKILL)
			}
			signalAll(targets, syscall.SIGKILL)
			deadline = time.Now().Add(time.Hour) // SIGKILL from now on
			killing := true
			for i := 0; killing && i < 200; i++ {
				time.Sleep(2 * time.Millisecond)
				targets = findTargets(scanProcs(), match)
				signalAll(targets, syscall.SIGKILL)
				killing = len(targets) > 0
			}
			break
		}
		var fresh []int
		for _, pid := range targets {
			if !termed[pid] {
				termed[pid] = true
				fresh = append(fresh, pid)
			}
		}
		if len(termed) == len(fresh) {
			// First round: the groups at once, so that a shell dies
			// with its foreground job instead of reporting it.
			for g := range match.groups {
				_ = syscall.Kill(-g, syscall.SIGTERM)
				_ = syscall.Kill(-g, syscall.SIGCONT)
			}
		}
		signalAll(fresh, syscall.SIGTERM)
		time.Sleep(10 * time.Millisecond)
	}
	bashTracker.mu.Lock()
	for pid := range killed {
		bashTracker.seen[pid] = true
	}
	bashTracker.mu.Unlock()
	reapOrphans(scanProcs())
}

// reapOrphans reaps the dead children of pi that bash calls started (and that
// exec.Cmd is not waiting for), and forgets groups and pids that are gone.
func reapOrphans(procs []procInfo) {
	self := os.Getpid()
	bashTracker.mu.Lock()
	defer bashTracker.mu.Unlock()
	present := make(map[int]bool, len(procs))
	groups := map[int]bool{}
	for _, p := range procs {
		present[p.pid] = true
		if !p.dead() {
			groups[p.pgid] = true
		}
		if p.ppid != self || !p.dead() || bashTracker.shells[p.pid] {
			continue
		}
		if bashTracker.groups[p.pgid] || bashTracker.seen[p.pid] {
			var ws unix.WaitStatus
			if n, err := unix.Wait4(p.pid, &ws, unix.WNOHANG, nil); err == nil && n == p.pid {
				delete(present, p.pid)
			}
		}
	}
	for pid := range bashTracker.seen {
		if !present[pid] {
			delete(bashTracker.seen, pid)
		}
	}
	for g := range bashTracker.groups {
		if !groups[g] && !bashTracker.shells[g] {
			delete(bashTracker.groups, g)
		}
	}
}

// procInfo is one process as /proc/PID/stat shows it.
type procInfo struct {
	pid, ppid, pgid int
	state           byte
}

// dead reports a zombie (or a process being torn down).
func (p procInfo) dead() bool { return p.state == 'Z' || p.state == 'X' || p.state == 'x' }

// scanProcs lists every process.
func scanProcs() []procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procInfo, 0, len(names))
	buf := make([]byte, 512)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		if p, ok := readStat(pid, buf); ok {
			out = append(out, p)
		}
	}
	return out
}

// readStat parses "pid (comm) state ppid pgrp ..." from /proc/PID/stat.
func readStat(pid int, buf []byte) (procInfo, bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	n, _ := f.Read(buf)
	f.Close()
	b := buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procInfo{}, false
	}
	fields := bytes.Fields(b[i+2:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(fields[1]))
	pgid, err2 := strconv.Atoi(string(fields[2]))
	if err1 != nil || err2 != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, state: fields[0][0]}, true
}

// readEnviron returns /proc/PID/environ with a leading NUL, so that a
// variable is always found as "\x00NAME=".
func readEnviron(pid int) []byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil || len(b) == 0 {
		return nil
	}
	out := make([]byte, 0, len(b)+2)
	out = append(out, 0)
	out = append(out, b...)
	if out[len(out)-1] != 0 {
		out = append(out, 0)
	}
	return out
}

// procMatcher picks the processes of a call (or of every call): those in
// one of its process groups or with its marker in their environment. Each
// environment is read once per matcher.
type procMatcher struct {
	groups map[int]bool
	env    []byte // "\x00PI_BASH_CALL=VALUE" (a prefix of the variable)
	cache  map[int]bool
}

func (c *callProcs) matcher() *procMatcher {
	return &procMatcher{groups: map[int]bool{c.pid: true}, env: c.marker}
}

func (m *procMatcher) match(p procInfo) bool {
	if m.groups[p.pgid] {
		return true
	}
	if v, ok := m.cache[p.pid]; ok {
		return v
	}
	if m.cache == nil {
		m.cache = map[int]bool{}
	}
	v := bytes.Contains(readEnviron(p.pid), m.env)
	m.cache[p.pid] = v
	return v
}

// findTargets returns the live processes (never pi itself) that match, with
// all their live descendants.
func findTargets(procs []procInfo, m *procMatcher) []int {
	self := os.Getpid()
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	live := map[int]bool{}
	for _, p := range procs {
		if !p.dead() && p.pid != self {
			live[p.pid] = true
		}
	}
	picked := map[int]bool{}
	var stack []int
	for _, p := range procs {
		if !live[p.pid] {
			continue
		}
		if m.match(p) {
			picked[p.pid] = true
			stack = append(stack, p.pid)
		}
	}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[pid] {
			if live[c] && !picked[c] {
				picked[c] = true
				stack = append(stack, c)
			}
		}
	}
	// Parents before children: a shell signalled after its foreground job
	// died would first report the death into the output.
	ppid := make(map[int]int, len(procs))
	for _, p := range procs {
		ppid[p.pid] = p.ppid
	}
	out := make([]int, 0, len(picked))
	for pid := range picked {
		if !picked[ppid[pid]] {
			out = append(out, pid)
		}
	}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i]] {
			if picked[c] {
				out = append(out, c)
			}
		}
	}
	return out
}

// signalName names a signal as "SIGKILL".
func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return "signal " + strconv.Itoa(int(sig))
}
