//go:build linux

package builtin

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-go/pi/internal/cgroup"
)

// Process control on Linux.
//
// Every bash call runs its shell in a session of its own (so in a process
// group of its own, and nothing it starts can join pi's process group or
// session), with a marker in its environment, PI_BASH_CALL=<instance>-<n>,
// that every process it starts inherits. Where a writable cgroup v2
// hierarchy is there, the shell also starts directly inside a cgroup of its
// own (internal/cgroup), a child of pi-<pid>-<instance> under pi's own
// cgroup; everything the call starts stays in it unless it has the rights to
// move itself out. pi becomes a child subreaper, so processes orphaned by a
// call (double forks, setsid daemons) are re-parented to pi instead of init.
// To stop a call, pi SIGTERMs and then kills its cgroup whole (cgroup.kill)
// and, as a second net, repeatedly scans /proc and signals every live
// process that is in the call's session or process group, carries the
// call's marker, or - when no other call is running - is an orphan
// re-parented to pi outside pi's session since the call started, and every
// descendant of those, until none is left; then it reaps the orphans that
// died as its children and removes the cgroup. KillAllBash does the same for
// every call of this pi process. What escapes is listed in docs/tools.md.
//
// Process-wide: the subreaper flag (a property of the process), the
// registry below and KillAllBash, which kills the calls of every bash tool
// of the process.

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

	// cg guards the cgroups: root is pi-<pid>-<instance> (nil until the
	// first call, and again after KillAllBash), calls the call groups not
	// yet removed, off is set (with why) when cgroups cannot be used.
	cg struct {
		sync.Mutex
		root  *cgroup.Group
		calls map[*cgroup.Group]bool
		off   bool
		why   error
		seq   uint64
	}
}{shells: map[int]bool{}, groups: map[int]bool{}, seen: map[int]bool{}}

// bashSysProcAttr puts the shell in a new session (and so a new process
// group, with the shell's pid as both ids).
func bashSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// startShell starts the command newCmd makes in a session of its own and,
// where cgroups can be used, directly inside a new cgroup, and registers it.
// When the start fails in a way the cgroup may cause (clone3 filtered, no
// right to move into the group), it starts a fresh command without a cgroup
// and, if that works, uses no cgroups from then on.
func startShell(newCmd func() *exec.Cmd, marker string) (*exec.Cmd, *callProcs, error) {
	prepareProcs()
	bashTracker.spawn.RLock()
	defer bashTracker.spawn.RUnlock()
	cmd := newCmd()
	cmd.SysProcAttr = bashSysProcAttr()
	g := newCallGroup()
	release := func() {}
	if g != nil {
		var err error
		if release, err = g.Attach(cmd.SysProcAttr); err != nil {
			dropCallGroup(g)
			g = nil
			cmd.SysProcAttr = bashSysProcAttr()
		}
	}
	err := cmd.Start()
	release()
	if err != nil && g != nil {
		dropCallGroup(g)
		g = nil
		if cgroup.StartErrorIsCgroup(err) {
			retry := newCmd()
			retry.SysProcAttr = bashSysProcAttr()
			if err2 := retry.Start(); err2 != nil {
				err = err2
			} else {
				disableCgroups(fmt.Errorf("start a shell in a cgroup: %w", err))
				cmd, err = retry, nil
			}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return cmd, trackShell(cmd.Process.Pid, marker, g), nil
}

// prepareProcs makes pi a child subreaper, once.
func prepareProcs() {
	bashTracker.once.Do(func() {
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	})
}

// newCallGroup creates the cgroup of a new call (and pi's own group of
// calls first), or returns nil when cgroups are off or the group cannot be
// made.
func newCallGroup() *cgroup.Group {
	cg := &bashTracker.cg
	cg.Lock()
	defer cg.Unlock()
	if cg.off {
		return nil
	}
	if cg.root == nil {
		p, err := cgroup.Detect()
		var root *cgroup.Group
		if err == nil {
			removeStaleGroups(p)
			root, err = p.New("pi-" + strconv.Itoa(os.Getpid()) + "-" + bashInstance)
		}
		if err != nil {
			cg.off, cg.why = true, err
			return nil
		}
		cg.root, cg.calls = root, map[*cgroup.Group]bool{}
	}
	cg.seq++
	g, err := cg.root.New("call-" + strconv.FormatUint(cg.seq, 10))
	if err != nil {
		return nil // this call runs without one; the scan still finds its processes
	}
	cg.calls[g] = true
	return g
}

// removeStaleGroups removes the empty groups of pi processes that are gone
// (killed before they could clean up): pi-<pid>-<instance> where no process
// <pid> exists. It never kills anything: a group that still has processes
// stays.
func removeStaleGroups(p cgroup.Parent) {
	names, _ := p.Children()
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, "pi-")
		if !ok {
			continue
		}
		pidText, inst, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || len(inst) != len(bashInstance) {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || err == syscall.EPERM {
			continue // that pi (or a process with its pid) still runs
		}
		if g, err := p.Open(name); err == nil {
			_ = g.Remove()
		}
	}
}

// dropCallGroup removes a call group that never held a process.
func dropCallGroup(g *cgroup.Group) {
	cg := &bashTracker.cg
	cg.Lock()
	defer cg.Unlock()
	if g.Remove() == nil {
		delete(cg.calls, g)
	}
}

// disableCgroups stops using cgroups for the calls to come.
func disableCgroups(why error) {
	cg := &bashTracker.cg
	cg.Lock()
	defer cg.Unlock()
	cg.off, cg.why = true, why
}

// sweepCallGroups removes the call groups whose processes are all gone.
func sweepCallGroups() {
	cg := &bashTracker.cg
	cg.Lock()
	defer cg.Unlock()
	for g := range cg.calls {
		if pop, err := g.Populated(); err == nil && !pop && g.Remove() == nil {
			delete(cg.calls, g)
		}
	}
}

// bashCgroupState says whether bash calls run in cgroups, and if not, why
// (for tests and diagnostics).
func bashCgroupState() (on bool, why error) {
	cg := &bashTracker.cg
	cg.Lock()
	defer cg.Unlock()
	return !cg.off, cg.why
}

// enlargePipe raises a pipe's capacity to 1MB so that a command that prints
// fast blocks less often.
func enlargePipe(f *os.File) {
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, 1<<20)
}

// callProcs is the process side of one bash call.
type callProcs struct {
	pid    int // the shell, also the session and process group id
	marker []byte
	start  uint64        // the shell's start time: nothing of the call is older
	group  *cgroup.Group // the call's cgroup; nil without cgroups
}

// trackShell registers a started shell (while spawns are held).
func trackShell(pid int, marker string, g *cgroup.Group) *callProcs {
	bashTracker.mu.Lock()
	bashTracker.shells[pid] = true
	bashTracker.groups[pid] = true
	bashTracker.mu.Unlock()
	return &callProcs{pid: pid, marker: []byte("\x00" + bashMarkerEnv + "=" + marker + "\x00"), start: startTicks(pid), group: g}
}

// terminate stops every process of the call: SIGTERM (and SIGCONT, so that
// stopped ones see it), then after grace, or as soon as all are gone,
// SIGKILL (the cgroup whole, and every process the scan finds) until none
// is left.
func (c *callProcs) terminate(grace time.Duration) {
	killMatching(c.matcher(), grace, c.group)
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
	sweepCallGroups()
}

// KillAllBash kills every live process started by any bash call of this pi
// process (the shells, their background jobs, daemons that detached with
// setsid or a double fork, and orphans re-parented to pi outside pi's
// session), SIGTERM first and SIGKILL after a short grace (the calls'
// cgroups whole, where there are cgroups), reaps them and removes the
// cgroups. The CLI calls it when pi exits. It returns when they are gone, in
// about a second at most.
func KillAllBash() {
	prefix := []byte("\x00" + bashMarkerEnv + "=" + bashInstance + "-")
	bashTracker.mu.Lock()
	groups := make(map[int]bool, len(bashTracker.groups))
	for g := range bashTracker.groups {
		groups[g] = true
	}
	bashTracker.mu.Unlock()
	cg := &bashTracker.cg
	cg.Lock()
	root := cg.root
	cg.Unlock()
	m := newProcMatcher(groups, prefix, startTicks(os.Getpid()), 0)
	killMatching(m, 500*time.Millisecond, root)
	if root == nil {
		return
	}
	// Spawns are held so that no call creates a group in root meanwhile.
	bashTracker.spawn.Lock()
	defer bashTracker.spawn.Unlock()
	cg.Lock()
	defer cg.Unlock()
	if cg.root != root {
		return
	}
	_ = root.Kill() // a call that started after the kill
	if root.WaitEmpty(time.Second) == nil && root.Remove() == nil {
		cg.root, cg.calls = nil, nil
	}
}

// killMatching signals the matching processes and their descendants, and
// the processes of g (nil: none) and its child groups, until none is alive
// (SIGTERM until grace is over, then SIGKILL and cgroup.kill, in a bounded
// number of rounds), then reaps the orphans among them.
func killMatching(m *procMatcher, grace time.Duration, g *cgroup.Group) {
	killed := map[int]bool{}
	termed := map[int]bool{}
	deadline := time.Now().Add(grace)
	for round := 0; round < 400; round++ {
		hard := !time.Now().Before(deadline)
		n := func() int {
			bashTracker.spawn.Lock()
			defer bashTracker.spawn.Unlock()
			m.refresh()
			populated := false
			m.members = nil
			if g != nil {
				pids, _ := g.Pids()
				m.members = make(map[int]bool, len(pids))
				for _, pid := range pids {
					m.members[pid] = true
				}
				populated, _ = g.Populated()
			}
			targets := findTargets(scanProcs(), m)
			if len(targets) == 0 && !populated {
				return 0
			}
			sig := syscall.SIGTERM
			if hard {
				sig = syscall.SIGKILL
				if g != nil {
					// Every process of the cgroup at once: a forking
					// process cannot outrun it.
					_ = g.Kill()
				}
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
			return len(targets) + 1
		}()
		if n == 0 {
			break
		}
		switch {
		case hard && g != nil:
			_ = g.WaitEmpty(20 * time.Millisecond)
		case hard:
			time.Sleep(2 * time.Millisecond)
		default:
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
// exec.Cmd is not waiting for): in a call's session or group, seen alive by
// a scan, or in a call's cgroup; and forgets groups and pids that are gone.
func reapOrphans(procs []procInfo) {
	self := os.Getpid()
	cg := &bashTracker.cg
	cg.Lock()
	root := cg.root
	cg.Unlock()
	bashTracker.mu.Lock()
	defer bashTracker.mu.Unlock()
	present := make(map[int]bool, len(procs))
	groups := map[int]bool{}
	for _, p := range procs {
		present[p.pid] = true
		if !p.dead() {
			groups[p.pgid] = true
			groups[p.sid] = true
		}
		if p.ppid != self || !p.dead() || bashTracker.shells[p.pid] {
			continue
		}
		// A zombie that was in a call's cgroup is a call's, even if no
		// scan saw it alive (it died between two).
		if bashTracker.groups[p.pgid] || bashTracker.groups[p.sid] || bashTracker.seen[p.pid] || (root != nil && root.Holds(p.pid)) {
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
	pid, ppid, pgid, sid int
	start                uint64 // start time, clock ticks after boot
	state                byte
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
	sid, err4 := strconv.Atoi(string(f[3]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, sid: sid, start: start, state: f[0][0]}, true
}

// startTicks is the start time of a process (0 when unknown).
func startTicks(pid int) uint64 {
	var buf [1024]byte
	p, _ := readStat(pid, buf[:])
	return p.start
}

// procMatcher picks the processes of a call (or of every call, own == 0):
// those in one of its cgroups (members), those in one of its sessions or
// process groups (each call's shell leads both, with its pid as the id),
// those with its marker in their environment, and orphans: children of pi
// (re-parented to it, the subreaper) outside pi's session (no process of a
// call can enter it: each call has a session of its own), started since
// `since`, with no other call's marker, that are not the shell of another
// call nor in its session, group or cgroup, when no other call runs (or for
// every call). Only
// processes started since `since` can carry the marker, so the environment
// of older ones is not read; each environment is read once per matcher.
type procMatcher struct {
	groups map[int]bool
	env    []byte // "\x00PI_BASH_CALL=VALUE" (a prefix of the variable)
	since  uint64
	own    int // the call's shell; 0 for every call
	self   int
	sess   int // pi's session

	anyEnv []byte        // "\x00PI_BASH_CALL=INSTANCE-": any call of this pi
	group  *cgroup.Group // the call's cgroup (nil: none, or every call)

	members      map[int]bool // processes of the call's cgroup, set each round
	orphans      bool         // set by refresh
	others       map[int]bool // other calls' shells (and sessions, groups), set by refresh
	otherMembers map[int]bool // processes in other calls' cgroups, set by refresh

	cache map[int]int // environment classes
	buf   []byte
}

func newProcMatcher(groups map[int]bool, env []byte, since uint64, own int) *procMatcher {
	sess, _ := unix.Getsid(0)
	return &procMatcher{groups: groups, env: env, anyEnv: []byte("\x00" + bashMarkerEnv + "=" + bashInstance + "-"),
		since: since, own: own, self: os.Getpid(), sess: sess}
}

func (c *callProcs) matcher() *procMatcher {
	m := newProcMatcher(map[int]bool{c.pid: true}, c.marker, c.start, c.pid)
	m.group = c.group
	return m
}

// refresh reads which other calls are running and which processes are in
// other calls' cgroups; call it with spawns paused.
func (m *procMatcher) refresh() {
	bashTracker.mu.Lock()
	m.others = map[int]bool{}
	if m.own == 0 {
		m.orphans = true
		bashTracker.mu.Unlock()
		return
	}
	for pid := range bashTracker.shells {
		if pid != m.own {
			m.others[pid] = true
		}
	}
	// Sessions and groups of calls that ended but may still have
	// background processes are not this call's either.
	for g := range bashTracker.groups {
		if g != m.own {
			m.others[g] = true
		}
	}
	running := 0
	for pid := range bashTracker.shells {
		if pid != m.own {
			running++
		}
	}
	m.orphans = running == 0
	bashTracker.mu.Unlock()

	cg := &bashTracker.cg
	cg.Lock()
	var groups []*cgroup.Group
	for g := range cg.calls {
		if g != m.group {
			groups = append(groups, g)
		}
	}
	cg.Unlock()
	m.otherMembers = map[int]bool{}
	for _, g := range groups {
		pids, _ := g.Pids()
		for _, pid := range pids {
			m.otherMembers[pid] = true
		}
	}
}

// Environment classes of a process, as its PI_BASH_CALL tag says.
const (
	envNone  = iota // no tag of this pi process
	envOwn          // the tag this matcher looks for
	envOther        // the tag of another call of this pi process
)

func (m *procMatcher) match(p procInfo) bool {
	if m.groups[p.pgid] || m.groups[p.sid] || m.members[p.pid] {
		return true
	}
	if p.start < m.since || m.others[p.pid] || m.others[p.pgid] || m.others[p.sid] || m.otherMembers[p.pid] {
		return false
	}
	switch m.envClass(p.pid) {
	case envOwn:
		return true
	case envOther:
		return false
	}
	return m.orphans && p.ppid == m.self && p.sid != m.sess
}

// envClass reads (once per matcher) which tag a process carries.
func (m *procMatcher) envClass(pid int) int {
	if v, ok := m.cache[pid]; ok {
		return v
	}
	if m.cache == nil {
		m.cache = map[int]int{}
		m.buf = make([]byte, 16<<10)
	}
	// Read the environment after a NUL, so that the first variable is
	// found as "\x00NAME=" too.
	m.buf[0] = 0
	env, _ := readFileInto("/proc/"+strconv.Itoa(pid)+"/environ", m.buf[:cap(m.buf)], 1)
	if len(env) > 1 && env[len(env)-1] != 0 {
		env = append(env, 0)
	}
	m.buf = env[:cap(env)]
	v := envNone
	switch {
	case bytes.Contains(env, m.env):
		v = envOwn
	case bytes.Contains(env, m.anyEnv):
		v = envOther
	}
	m.cache[pid] = v
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
