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
// that is in the call's process group, carries the call's marker, or - when
// no other call is running - is an orphan re-parented to pi into a process
// group of its own since the call started, and every descendant of those,
// until none is left; then it reaps the orphans that died as its children.
// KillAllBash does the same for every call of this pi process. What escapes:
// a process that scrubs its environment, leaves the group and is orphaned
// while another call runs, or that another service starts (see
// docs/tools.md).

// bashTracker is the registry of what bash calls started.
var bashTracker = struct {
	once sync.Once
	// spawn is held (read) while a shell is started and registered, and
	// (write) while a kill round scans and signals, so that a round never
	// sees a new shell before it is registered.
	spawn sync.RWMutex
	mu    sync.Mutex
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

// beginSpawn and endSpawn bracket starting a shell and trackShell.
func beginSpawn() { bashTracker.spawn.RLock() }
func endSpawn()   { bashTracker.spawn.RUnlock() }

// enlargePipe raises a pipe's capacity to 1MB so that a command that prints
// fast blocks less often.
func enlargePipe(f *os.File) {
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, 1<<20)
}

// callProcs is the process side of one bash call.
type callProcs struct {
	pid    int // the shell, also the process group id
	marker []byte
	start  uint64 // the shell's start time: nothing of the call is older
}

// trackShell registers a started shell (between beginSpawn and endSpawn).
func trackShell(pid int, marker string) *callProcs {
	bashTracker.mu.Lock()
	bashTracker.shells[pid] = true
	bashTracker.groups[pid] = true
	bashTracker.mu.Unlock()
	return &callProcs{pid: pid, marker: []byte("\x00" + bashMarkerEnv + "=" + marker + "\x00"), start: startTicks(pid)}
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
	bashTracker.spawn.Lock()
	m := c.matcher()
	m.refresh()
	procs := scanProcs()
	live := findTargets(procs, m)
	bashTracker.spawn.Unlock()
	bashTracker.mu.Lock()
	for _, p := range live {
		bashTracker.seen[p] = true
	}
	bashTracker.mu.Unlock()
	reapOrphans(procs)
}

// KillAllBash kills every live process started by any bash call of this pi
// process (the shells, their background jobs, daemons that detached with
// setsid or a double fork, and orphans re-parented to pi in a process group
// of their own), SIGTERM first and SIGKILL after a short grace, and reaps
// them. The CLI calls it when pi exits. It returns when they are gone, in
// about a second at most.
func KillAllBash() {
	prefix := []byte("\x00" + bashMarkerEnv + "=" + bashInstance + "-")
	bashTracker.mu.Lock()
	groups := make(map[int]bool, len(bashTracker.groups))
	for g := range bashTracker.groups {
		groups[g] = true
	}
	bashTracker.mu.Unlock()
	m := newProcMatcher(groups, prefix, startTicks(os.Getpid()), 0)
	killMatching(m, 500*time.Millisecond)
}

// killMatching signals the matching processes and their descendants until
// none is alive (SIGTERM until grace is over, then SIGKILL, in a bounded
// number of rounds), then reaps the orphans among them.
func killMatching(m *procMatcher, grace time.Duration) {
	killed := map[int]bool{}
	termed := map[int]bool{}
	deadline := time.Now().Add(grace)
	for round := 0; round < 400; round++ {
		hard := !time.Now().Before(deadline)
		n := func() int {
			bashTracker.spawn.Lock()
			defer bashTracker.spawn.Unlock()
			m.refresh()
			targets := findTargets(scanProcs(), m)
			if len(targets) == 0 {
				return 0
			}
			sig := syscall.SIGTERM
			if hard {
				sig = syscall.SIGKILL
			}
			if round == 0 || hard {
				// The groups at once first, so that a shell dies with
				// its foreground job instead of reporting it.
				for g := range m.groups {
					_ = syscall.Kill(-g, sig)
					if !hard {
						_ = syscall.Kill(-g, syscall.SIGCONT)
					}
				}
			}
			for _, pid := range targets {
				killed[pid] = true
				if hard {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				} else if !termed[pid] {
					termed[pid] = true
					_ = syscall.Kill(pid, syscall.SIGTERM)
					_ = syscall.Kill(pid, syscall.SIGCONT)
				}
			}
			return len(targets)
		}()
		if n == 0 {
			break
		}
		if hard {
			time.Sleep(2 * time.Millisecond)
		} else {
			time.Sleep(10 * time.Millisecond)
		}
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
	start           uint64 // start time, clock ticks after boot
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
	var buf [1024]byte
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		if p, ok := readStat(pid, buf[:]); ok {
			out = append(out, p)
		}
	}
	return out
}

// readFileInto reads a small /proc file into buf from offset off on
// (growing buf, keeping buf[:off]) and returns buf[:off+n], without
// allocating a File.
func readFileInto(path string, buf []byte, off int) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return buf[:off], false
	}
	defer unix.Close(fd)
	n := off
	for {
		if n == len(buf) {
			buf = append(buf[:cap(buf)], make([]byte, len(buf)+1)...)
			buf = buf[:cap(buf)]
		}
		m, err := unix.Read(fd, buf[n:])
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			return buf[:n], n > off
		}
		if m == 0 {
			return buf[:n], true
		}
		n += m
		if n < len(buf) {
			// A /proc file gives all it has in one read when the buffer
			// is large enough: a short read is the end.
			return buf[:n], true
		}
	}
}

// readStat parses "pid (comm) state ppid pgrp ..." from /proc/PID/stat.
func readStat(pid int, buf []byte) (procInfo, bool) {
	b, ok := readFileInto("/proc/"+strconv.Itoa(pid)+"/stat", buf[:cap(buf)], 0)
	if !ok {
		return procInfo{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procInfo{}, false
	}
	// Fields after the command: state ppid pgrp session tty_nr tpgid flags
	// minflt cminflt majflt cmajflt utime stime cutime cstime priority nice
	// num_threads itrealvalue starttime ...
	var f [20][]byte
	n := 0
	for _, field := range bytes.Fields(b[i+2:]) {
		if n == len(f) {
			break
		}
		f[n] = field
		n++
	}
	if n < len(f) || len(f[0]) != 1 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, start: start, state: f[0][0]}, true
}

// startTicks is the start time of a process (0 when unknown).
func startTicks(pid int) uint64 {
	var buf [1024]byte
	p, _ := readStat(pid, buf[:])
	return p.start
}

// procMatcher picks the processes of a call (or of every call, own == 0):
// those in one of its process groups, those with its marker in their
// environment, and orphans: children of pi (re-parented to it, the
// subreaper) in a process group other than pi's, started since `since`, that
// are not the shell of another running call, when no other call runs (or for
// every call). Only processes started since `since` can carry the marker,
// so the environment of older ones is not read; each environment is read
// once per matcher.
type procMatcher struct {
	groups map[int]bool
	env    []byte // "\x00PI_BASH_CALL=VALUE" (a prefix of the variable)
	since  uint64
	own    int // the call's shell; 0 for every call
	self   int
	pgrp   int // pi's process group

	orphans bool         // set by refresh
	others  map[int]bool // other calls' shells (and groups), set by refresh

	cache map[int]bool
	buf   []byte
}

func newProcMatcher(groups map[int]bool, env []byte, since uint64, own int) *procMatcher {
	return &procMatcher{groups: groups, env: env, since: since, own: own, self: os.Getpid(), pgrp: unix.Getpgrp()}
}

func (c *callProcs) matcher() *procMatcher {
	return newProcMatcher(map[int]bool{c.pid: true}, c.marker, c.start, c.pid)
}

// refresh reads which other calls are running; call it with spawns paused.
func (m *procMatcher) refresh() {
	bashTracker.mu.Lock()
	defer bashTracker.mu.Unlock()
	m.others = map[int]bool{}
	if m.own == 0 {
		m.orphans = true
		return
	}
	for pid := range bashTracker.shells {
		if pid != m.own {
			m.others[pid] = true
		}
	}
	m.orphans = len(m.others) == 0
}

func (m *procMatcher) match(p procInfo) bool {
	if m.groups[p.pgid] {
		return true
	}
	if p.start < m.since || m.others[p.pid] || m.others[p.pgid] {
		return false
	}
	if m.orphans && p.ppid == m.self && p.pgid != m.pgrp {
		return true
	}
	if v, ok := m.cache[p.pid]; ok {
		return v
	}
	if m.cache == nil {
		m.cache = map[int]bool{}
		m.buf = make([]byte, 16<<10)
	}
	// Read the environment after a NUL, so that the first variable is
	// found as "\x00NAME=" too.
	m.buf[0] = 0
	env, _ := readFileInto("/proc/"+strconv.Itoa(p.pid)+"/environ", m.buf[:cap(m.buf)], 1)
	if len(env) > 1 && env[len(env)-1] != 0 {
		env = append(env, 0)
	}
	m.buf = env[:cap(env)]
	v := bytes.Contains(env, m.env)
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
