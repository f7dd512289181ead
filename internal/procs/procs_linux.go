//go:build linux

package procs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-go/pi/internal/cgroup"
)

// Process control on Linux.
//
// Every call runs its shell in a session of its own (so in a process group
// of its own, and nothing it starts can join pi's process group or
// session), with the tag MarkerEnv=<instance>-<set>-<n> in its environment,
// which every process it starts inherits. Where a writable cgroup v2
// hierarchy is there, the shell also starts directly inside a cgroup of its
// own (internal/cgroup), call-<n> in its Set's group pi-<pid>-<random> under
// pi's own cgroup; everything the call starts stays in it unless it has the
// rights to move itself out. When the program made pi a child subreaper
// (BecomeSubreaper), processes orphaned by a call (double forks, setsid
// daemons) are re-parented to pi instead of init. To stop a call, pi
// SIGTERMs and then kills its cgroup whole (cgroup.kill) and, as a second
// net, repeatedly scans /proc and signals every live process that is in the
// call's session or process group, carries the call's tag, or - when no
// other call of the process is running - is an orphan re-parented to pi
// outside pi's session since the call started, and every descendant of
// those, until none is left; then it reaps the orphans that died as its
// children and removes the cgroup. Set.Close does the same for every call
// of the Set (its group whole, its tag prefix, the sessions of its calls;
// orphans when no call of another Set runs). What escapes is listed in
// docs/tools.md.

// instance tells this process's calls from another pi's; made on first
// use (package init runs on every start of pi, most of which run no
// command).
var instance = sync.OnceValue(randomHex)

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// registry is what every call's kill must know of the calls of the whole
// process, whatever Set started them.
var registry = struct {
	// spawn is held (read) while a shell is started and registered, and
	// (write) while a kill round scans and signals, so that a round never
	// sees a new shell before it is registered.
	spawn sync.RWMutex

	mu sync.Mutex
	// shells are the running shells (exec.Cmd.Wait reaps them, never
	// this package), with their Set.
	shells map[int]*Set
	// groups are the sessions (and process groups: a shell leads both,
	// with its pid as the id) of calls that may still have members.
	groups map[int]*Set
	// seen are pids known to have been started by a call (found by a
	// scan); when they die as children of pi they are reaped here.
	seen map[int]bool
	// sets are the Sets that started a call and are not closed yet, for
	// their cgroups.
	sets map[*Set]bool
	// own are children the program started itself outside any call (see
	// StartOwn): never orphans of a call, nor their sessions.
	own map[int]bool
}{shells: map[int]*Set{}, groups: map[int]*Set{}, seen: map[int]bool{}, sets: map[*Set]bool{}, own: map[int]bool{}}

// StartOwn starts, with start, a child that the program runs itself outside
// any bash call (an MCP server, an extension's exec), and marks it so that
// no call's clean-up takes it, or its session, for a process the call left:
// a child of pi in a session of its own, started while a call runs, looks
// exactly like an orphan the call left. It holds the lock a bash start
// holds, so no kill round sees the child before it is marked. start returns
// the child's pid. Call release once the child was waited for.
func StartOwn(start func() (pid int, err error)) (release func(), err error) {
	registry.spawn.RLock()
	defer registry.spawn.RUnlock()
	pid, err := start()
	if err != nil {
		return func() {}, err
	}
	registry.mu.Lock()
	registry.own[pid] = true
	registry.mu.Unlock()
	return func() {
		registry.mu.Lock()
		delete(registry.own, pid)
		registry.mu.Unlock()
	}, nil
}

var setSeq atomic.Uint64

// BecomeSubreaper makes the calling process a child subreaper
// (PR_SET_CHILD_SUBREAPER): orphans of the processes it starts are
// re-parented to it instead of to init, so a call's double-forked
// processes that dropped its tag and left its session (and, where there is
// one, its cgroup) can still be found as orphans of pi and ended. It is a
// property of the whole process: a program calls it once, at start.
// Without it such orphans go to init (or to another subreaper above pi)
// and only the call's cgroup can still find them.
//
// # Errors
//
// The prctl error, when the kernel refuses.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become a child subreaper: %w", err)
	}
	return nil
}

// Undumpable makes the calling process non-dumpable (PR_SET_DUMPABLE 0):
// the kernel then lets no other process without CAP_SYS_PTRACE read its
// /proc/PID/environ, mem, maps, fd or auxv, or ptrace it, not even a
// process of the same user and not the processes it starts itself, and
// writes no core dump. The key that pi read from its environment stays in
// that environment's memory, so this is what keeps it from every child.
// It is a property of the whole process and survives until the next
// execve (the children pi starts are dumpable again after their exec).
//
// # Errors
//
// The prctl error, when the kernel refuses.
func Undumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the process non-dumpable: %w", err)
	}
	return nil
}

// Set owns the processes of the calls started through it: Close ends them
// and none of another Set's. The zero value is not usable; call NewSet. It
// is safe for concurrent use.
type Set struct {
	id     string // the <set> of the tag
	prefix []byte // "\x00PI_BASH_CALL=<instance>-<set>-"
	calls  atomic.Uint64

	// closed is set, under registry.spawn (write), by Close; Start checks
	// it under registry.spawn (read).
	closed bool
	// since is the start time of the Set's first shell (nothing of its
	// calls is older); 0 until then. Under registry.mu.
	since uint64

	// cg guards the cgroups: root is pi-<pid>-<random> (nil until the
	// first call), calls the call groups not yet removed, off is set
	// (with why) when cgroups cannot be used.
	cg struct {
		sync.Mutex
		root  *cgroup.Group
		calls map[*cgroup.Group]bool
		off   bool
		why   error
		seq   uint64
	}
}

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("the runtime's processes were ended (it is closing): no new command starts")

// NewSet returns an empty Set. It starts nothing, makes no cgroup and is
// not registered until the first call.
func NewSet() *Set {
	id := strconv.FormatUint(setSeq.Add(1), 10)
	return &Set{id: id, prefix: []byte("\x00" + MarkerEnv + "=" + instance() + "-" + id + "-")}
}

// Cgroups says whether the calls of s run in cgroups, and if not, why (for
// tests and diagnostics). Before the first call it is on unless they were
// turned off.
func (s *Set) Cgroups() (on bool, why error) {
	s.cg.Lock()
	defer s.cg.Unlock()
	return !s.cg.off, s.cg.why
}

// Call is the process side of one call: its shell, the session and process
// group the shell leads, its tag and its cgroup.
type Call struct {
	set    *Set
	pid    int // the shell, also the session and process group id
	marker []byte
	start  uint64        // the shell's start time: nothing of the call is older
	group  *cgroup.Group // the call's cgroup; nil without cgroups
}

// Start starts the command newCmd makes as a new call of s: in a session of
// its own, with the call's tag added to its environment (cmd.Env, or the
// process's environment when nil; a tag already there is replaced) and,
// where cgroups can be used, directly inside a new cgroup. newCmd may set
// SysProcAttr for namespaces (Cloneflags, AmbientCaps: the sandbox's
// helper, internal/sandbox.SysProcAttr); Start adds the session and the
// cgroup and keeps those. When the start fails in a way the cgroup may cause
// (clone3 filtered, no right to move into the group), Start starts a fresh
// command from newCmd without a cgroup and, if that works, uses no cgroups
// for the calls of s from then on. The caller waits for the command
// (exec.Cmd.Wait) and then calls Exited.
//
// # Errors
//
// ErrClosed after Close; else the error of exec.Cmd.Start.
func (s *Set) Start(newCmd func() *exec.Cmd) (*exec.Cmd, *Call, error) {
	return s.start(newCmd, nil)
}

// Placement is the cgroup a launcher (StartVia) has the command born in,
// having to clone it itself: Dir is the call group's directory (opened by
// pi); the launcher sets Placed when the command was born there.
type Placement struct {
	Dir    *os.File
	Placed bool
}

// StartVia is Start with start in place of exec.Cmd.Start: a launcher
// that has another process start the command as pi's own child (the
// sandbox's fork server, which forks with CLONE_PARENT) and sets
// cmd.Process. Where the call has a cgroup, start gets its Placement (nil
// otherwise); a command the launcher did not place runs without one (its
// processes are then found by session, group, tag and as orphans of pi,
// docs/tools.md).
//
// # Errors
//
// ErrClosed after Close; else start's error.
func (s *Set) StartVia(newCmd func() *exec.Cmd, start func(*exec.Cmd, *Placement) error) (*exec.Cmd, *Call, error) {
	return s.start(newCmd, start)
}

// start is Start (via nil) and StartVia.
func (s *Set) start(newCmd func() *exec.Cmd, via func(*exec.Cmd, *Placement) error) (*exec.Cmd, *Call, error) {
	registry.spawn.RLock()
	defer registry.spawn.RUnlock()
	if s.closed {
		return nil, nil, ErrClosed
	}
	registry.mu.Lock()
	registry.sets[s] = true
	registry.mu.Unlock()
	marker := instance() + "-" + s.id + "-" + strconv.FormatUint(s.calls.Add(1), 10)
	prepare := func() *exec.Cmd {
		cmd := newCmd()
		cmd.Env = withMarker(cmd.Env, marker)
		cmd.SysProcAttr = sessionAttr(cmd.SysProcAttr)
		return cmd
	}
	cmd := prepare()
	if via != nil {
		return s.startVia(cmd, marker, via)
	}
	g := s.newCallGroup()
	release := func() {}
	if g != nil {
		var err error
		if release, err = g.Attach(cmd.SysProcAttr); err != nil {
			s.dropCallGroup(g)
			g = nil
			cmd = prepare()
		}
	}
	err := cmd.Start()
	release()
	if err != nil && g != nil {
		s.dropCallGroup(g)
		g = nil
		if cgroup.StartErrorIsCgroup(err) {
			retry := prepare()
			if err2 := retry.Start(); err2 != nil {
				err = err2
			} else {
				s.disableCgroups(fmt.Errorf("start a shell in a cgroup: %w", err))
				cmd, err = retry, nil
			}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return cmd, s.track(cmd.Process.Pid, marker, g), nil
}

// startVia starts cmd through via, placed in a new call group where
// there is one (while spawns are held).
func (s *Set) startVia(cmd *exec.Cmd, marker string, via func(*exec.Cmd, *Placement) error) (*exec.Cmd, *Call, error) {
	g := s.newCallGroup()
	var pl *Placement
	if g != nil {
		if dir, err := g.OpenDir(); err == nil {
			pl = &Placement{Dir: dir}
			defer dir.Close()
		}
	}
	err := via(cmd, pl)
	if g != nil && (pl == nil || !pl.Placed) {
		s.dropCallGroup(g)
		g = nil
	}
	if err != nil {
		return nil, nil, err
	}
	return cmd, s.track(cmd.Process.Pid, marker, g), nil
}

// withMarker returns env (the process's when nil) without any MarkerEnv
// entry and with the call's at the end.
func withMarker(env []string, marker string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, MarkerEnv+"=") {
			out = append(out, kv)
		}
	}
	return append(out, MarkerEnv+"="+marker)
}

// sessionAttr puts the shell in a new session (and so a new process group,
// with the shell's pid as both ids), keeping the namespace fields of ns
// (may be nil).
func sessionAttr(ns *syscall.SysProcAttr) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true}
	if ns != nil {
		a.Cloneflags, a.AmbientCaps = ns.Cloneflags, ns.AmbientCaps
	}
	return a
}

// track registers a started shell (while spawns are held).
func (s *Set) track(pid int, marker string, g *cgroup.Group) *Call {
	start := startTicks(pid)
	registry.mu.Lock()
	registry.shells[pid] = s
	registry.groups[pid] = s
	if s.since == 0 || (start != 0 && start < s.since) {
		s.since = start
	}
	registry.mu.Unlock()
	return &Call{set: s, pid: pid, marker: []byte("\x00" + MarkerEnv + "=" + marker + "\x00"), start: start, group: g}
}

// newCallGroup creates the cgroup of a new call (and the Set's group
// first), or returns nil when cgroups are off or the group cannot be made.
func (s *Set) newCallGroup() *cgroup.Group {
	cg := &s.cg
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
			root, err = p.New("pi-" + strconv.Itoa(os.Getpid()) + "-" + randomHex())
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
// (killed before they could clean up): pi-<pid>-<random> where no process
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
		if !ok || err != nil || pid <= 0 || len(inst) != len(instance()) {
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
func (s *Set) dropCallGroup(g *cgroup.Group) {
	s.cg.Lock()
	defer s.cg.Unlock()
	if g.Remove() == nil {
		delete(s.cg.calls, g)
	}
}

// disableCgroups stops using cgroups for the calls of s to come.
func (s *Set) disableCgroups(why error) {
	s.cg.Lock()
	defer s.cg.Unlock()
	s.cg.off, s.cg.why = true, why
}

// sweepCallGroups removes the call groups of s whose processes are all
// gone.
func (s *Set) sweepCallGroups() {
	s.cg.Lock()
	defer s.cg.Unlock()
	for g := range s.cg.calls {
		if pop, err := g.Populated(); err == nil && !pop && g.Remove() == nil {
			delete(s.cg.calls, g)
		}
	}
}

// root is the Set's group (nil: none yet, or none).
func (s *Set) root() *cgroup.Group {
	s.cg.Lock()
	defer s.cg.Unlock()
	return s.cg.root
}

// EnlargePipe raises a pipe's capacity to 1MB so that a command that prints
// fast blocks less often. It reports whether the pipe now holds 1MB (the
// kernel's fs.pipe-max-size and the user's pipe quota may refuse).
func EnlargePipe(f *os.File) bool {
	n, err := unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, 1<<20)
	return err == nil && n >= 1<<20
}

// PipeRefillPause blocks the calling thread for one millisecond in the
// kernel, so that a reader that just drained an enlarged pipe lets it fill
// again instead of waking once per write of the command (a tool that writes
// 4KB at a time into a pipe read as fast as it fills costs a wake-up, an
// epoll round and a read per 4KB: about 70 thousand per 300MB, which cost
// more CPU than the copying itself). A nanosleep, not time.Sleep: parking
// the goroutine would cost as many scheduler wake-ups as it saves.
func PipeRefillPause() {
	ts := unix.Timespec{Nsec: int64(time.Millisecond)}
	_ = unix.Nanosleep(&ts, nil)
}

// Terminate stops every process of the call: SIGTERM (and SIGCONT, so that
// stopped ones see it), then after grace, or as soon as all are gone,
// SIGKILL (the cgroup whole, and every process the scan finds) until none
// is left. It returns when they are gone.
func (c *Call) Terminate(grace time.Duration) {
	killMatching(c.matcher(), grace, c.group)
}

// Exited is called after exec.Cmd.Wait reaped the shell: processes the
// call left running are remembered, so that they can be reaped when they
// die as pi's children, dead ones are reaped, and the emptied call groups
// of the Set are removed. It looks only at pi's own descendants when pi is
// a child subreaper (callProcs), so its cost does not grow with the host's
// process count; it kills nothing.
func (c *Call) Exited() {
	registry.mu.Lock()
	delete(registry.shells, c.pid)
	registry.mu.Unlock()
	registry.spawn.Lock()
	m := c.matcher()
	m.refresh()
	procs := callProcs()
	live := findTargets(procs, m)
	registry.spawn.Unlock()
	registry.mu.Lock()
	for _, p := range live {
		registry.seen[p] = true
	}
	registry.mu.Unlock()
	reapOrphans(procs)
	c.set.sweepCallGroups()
}

// Close ends every live process started by a call of s (the shells, their
// background jobs, daemons that detached with setsid or a double fork, and
// orphans re-parented to pi outside pi's session while no other Set's call
// runs), SIGTERM first and SIGKILL after a short grace (the Set's cgroup
// whole, where there are cgroups), reaps them and removes the cgroups.
// Calls started later fail with ErrClosed. It returns when the processes
// are gone, in about a second at most. A second Close does nothing.
func (s *Set) Close() {
	registry.spawn.Lock()
	was := s.closed
	s.closed = true
	registry.spawn.Unlock()
	registry.mu.Lock()
	started := registry.sets[s]
	registry.mu.Unlock()
	if was || !started {
		return // a Set that never started a call has nothing to end
	}
	root := s.root()
	killMatching(s.matcher(), 500*time.Millisecond, root)
	if root != nil {
		// Spawns are held so that no kill round of another call runs
		// while the group is emptied and removed.
		registry.spawn.Lock()
		s.cg.Lock()
		_ = root.Kill()
		if root.WaitEmpty(time.Second) == nil && root.Remove() == nil {
			s.cg.root, s.cg.calls = nil, nil
		}
		s.cg.Unlock()
		registry.spawn.Unlock()
	}
	reapOrphans(scanProcs())
	registry.mu.Lock()
	delete(registry.sets, s)
	registry.mu.Unlock()
}

// killMatching signals the matching processes and their descendants, and
// the processes of g (nil: none) and its child groups, until none is alive
// (SIGTERM until grace is over, then SIGKILL and cgroup.kill, in a bounded
// number of rounds), then reaps the orphans among them.
func killMatching(m *matcher, grace time.Duration, g *cgroup.Group) {
	killed := map[int]bool{}
	termed := map[int]bool{}
	deadline := time.Now().Add(grace)
	for round := 0; round < 400; round++ {
		hard := !time.Now().Before(deadline)
		n := func() int {
			registry.spawn.Lock()
			defer registry.spawn.Unlock()
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
	registry.mu.Lock()
	for pid := range killed {
		registry.seen[pid] = true
	}
	registry.mu.Unlock()
	reapOrphans(scanProcs())
}

// reapOrphans reaps the dead children of pi that calls started (and that
// exec.Cmd is not waiting for): in a call's session or group, seen alive by
// a scan, or in a Set's cgroup; and forgets groups and pids that are gone.
// procs is every process (scanProcs) or pi's tree (callProcs).
func reapOrphans(procs []procInfo) {
	self := os.Getpid()
	registry.mu.Lock()
	sets := make([]*Set, 0, len(registry.sets))
	for s := range registry.sets {
		sets = append(sets, s)
	}
	registry.mu.Unlock()
	var roots []*cgroup.Group
	for _, s := range sets {
		if r := s.root(); r != nil {
			roots = append(roots, r)
		}
	}
	inRoots := func(pid int) bool {
		for _, r := range roots {
			if r.Holds(pid) {
				return true
			}
		}
		return false
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	present := make(map[int]bool, len(procs))
	groups := map[int]bool{}
	for _, p := range procs {
		present[p.pid] = true
		if !p.dead() {
			groups[p.pgid] = true
			groups[p.sid] = true
		}
		if p.ppid != self || !p.dead() || registry.shells[p.pid] != nil {
			continue
		}
		// A zombie that was in a call's cgroup is a call's, even if no
		// scan saw it alive (it died between two).
		if registry.groups[p.pgid] != nil || registry.groups[p.sid] != nil || registry.seen[p.pid] || inRoots(p.pid) {
			var ws unix.WaitStatus
			if n, err := unix.Wait4(p.pid, &ws, unix.WNOHANG, nil); err == nil && n == p.pid {
				delete(present, p.pid)
			}
		}
	}
	// procs may be pi's tree only (callProcs), whose children files can
	// miss a process that a sibling's exit moved past: a pid or group is
	// forgotten only when the kernel also says it is gone.
	for pid := range registry.seen {
		if !present[pid] && syscall.Kill(pid, 0) == syscall.ESRCH {
			delete(registry.seen, pid)
		}
	}
	for g := range registry.groups {
		if !groups[g] && registry.shells[g] == nil && syscall.Kill(-g, 0) == syscall.ESRCH {
			delete(registry.groups, g)
		}
	}
}
