//go:build !linux

package procs

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Process control off Linux: each call's shell runs in its own session (so
// in its own process group, which nothing it starts can leave for pi's) and
// the whole group is signalled. Processes that leave the group (setsid,
// daemons) are not found; see docs/tools.md.

var setSeq atomic.Uint64

// StartOwn runs start: off Linux there is no orphan rule that could take
// the program's own children for a call's.
func StartOwn(start func() (pid int, err error)) (release func(), err error) {
	_, err = start()
	return func() {}, err
}

// BecomeSubreaper does nothing off Linux, where there are no child
// subreapers; it returns nil.
func BecomeSubreaper() error { return nil }

// Undumpable does nothing off Linux and returns nil: there, other
// processes of the same user may read this process's environment (for
// example through ps on macOS). See docs/security.md.
func Undumpable() error { return nil }

// Set owns the processes of the calls started through it: Close ends them
// and none of another Set's. It is safe for concurrent use.
type Set struct {
	id     string
	calls  atomic.Uint64
	mu     sync.Mutex
	groups map[int]bool
	closed bool
}

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("the runtime's processes were ended (it is closing): no new command starts")

// NewSet returns an empty Set.
func NewSet() *Set {
	return &Set{id: strconv.FormatUint(setSeq.Add(1), 10), groups: map[int]bool{}}
}

// Cgroups: there are no cgroups off Linux.
func (s *Set) Cgroups() (bool, error) { return false, errors.New("cgroups are Linux only") }

// Call is the process side of one call: its shell, which leads its
// session and process group.
type Call struct {
	set *Set
	pid int
}

// Start starts the command newCmd makes as a new call of s, in a session
// of its own, with the call's tag in its environment.
//
// # Errors
//
// ErrClosed after Close; else the error of exec.Cmd.Start.
func (s *Set) Start(newCmd func() *exec.Cmd) (*exec.Cmd, *Call, error) {
	return s.StartVia(newCmd, func(cmd *exec.Cmd, _ *Placement) error { return cmd.Start() })
}

// Placement is never given off Linux (no cgroups).
type Placement struct {
	Dir    *os.File
	Placed bool
}

// StartVia is Start with start in place of exec.Cmd.Start.
func (s *Set) StartVia(newCmd func() *exec.Cmd, start func(*exec.Cmd, *Placement) error) (*exec.Cmd, *Call, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, ErrClosed
	}
	cmd := newCmd()
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = nil
	for _, kv := range env {
		if !strings.HasPrefix(kv, MarkerEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, MarkerEnv+"="+s.id+"-"+strconv.FormatUint(s.calls.Add(1), 10))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := start(cmd, nil); err != nil {
		return nil, nil, err
	}
	s.groups[cmd.Process.Pid] = true
	return cmd, &Call{set: s, pid: cmd.Process.Pid}, nil
}

// EnlargePipe does nothing off Linux, and reports false.
func EnlargePipe(*os.File) bool { return false }

// PipeRefillPause is never needed off Linux (EnlargePipe reports false);
// it does nothing.
func PipeRefillPause() {}

// Terminate stops the call's process group: SIGTERM, then SIGKILL after
// grace.
func (c *Call) Terminate(grace time.Duration) { killGroups([]int{c.pid}, grace) }

// Exited forgets the call's group once it is empty.
func (c *Call) Exited() {
	if groupGone(c.pid) {
		c.set.mu.Lock()
		delete(c.set.groups, c.pid)
		c.set.mu.Unlock()
	}
}

// Close kills the process groups of every call of s that still have
// members, SIGTERM first and SIGKILL after a short grace. Calls started
// later fail with ErrClosed.
func (s *Set) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	var gs []int
	for g := range s.groups {
		gs = append(gs, g)
	}
	s.groups = map[int]bool{}
	s.mu.Unlock()
	killGroups(gs, 500*time.Millisecond)
}

func killGroups(gs []int, grace time.Duration) {
	for _, g := range gs {
		_ = syscall.Kill(-g, syscall.SIGTERM)
		_ = syscall.Kill(-g, syscall.SIGCONT)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		alive := false
		for _, g := range gs {
			if !groupGone(g) {
				alive = true
			}
		}
		if !alive {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, g := range gs {
		_ = syscall.Kill(-g, syscall.SIGKILL)
	}
}

func groupGone(g int) bool {
	return errors.Is(syscall.Kill(-g, 0), syscall.ESRCH)
}
