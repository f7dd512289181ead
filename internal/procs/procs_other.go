//go:build !linux

package builtin

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Process control off Linux: each call's shell runs in its own session (so
// in its own process group, which nothing it starts can leave for pi's) and
// the whole group is signalled. Processes that leave the group (setsid,
// daemons) are not found; see docs/tools.md.

var bashGroups = struct {
	mu     sync.Mutex
	groups map[int]bool
}{groups: map[int]bool{}}

func bashSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// startShell starts the command newCmd makes in a session of its own and
// registers it.
func startShell(newCmd func() *exec.Cmd, _ string) (*exec.Cmd, *callProcs, error) {
	cmd := newCmd()
	cmd.SysProcAttr = bashSysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return cmd, trackShell(cmd.Process.Pid), nil
}

// bashCgroupState: there are no cgroups off Linux.
func bashCgroupState() (bool, error) { return false, errors.New("cgroups are Linux only") }

func enlargePipe(*os.File) {}

type callProcs struct{ pid int }

func trackShell(pid int) *callProcs {
	bashGroups.mu.Lock()
	bashGroups.groups[pid] = true
	bashGroups.mu.Unlock()
	return &callProcs{pid: pid}
}

func (c *callProcs) terminate(grace time.Duration) { killGroups([]int{c.pid}, grace) }

func (c *callProcs) shellExited() {
	if groupGone(c.pid) {
		bashGroups.mu.Lock()
		delete(bashGroups.groups, c.pid)
		bashGroups.mu.Unlock()
	}
}

// KillAllBash kills the process groups of every bash call of this pi process
// that still has members, SIGTERM first and SIGKILL after a short grace.
func KillAllBash() {
	bashGroups.mu.Lock()
	var gs []int
	for g := range bashGroups.groups {
		gs = append(gs, g)
	}
	bashGroups.groups = map[int]bool{}
	bashGroups.mu.Unlock()
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

func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return "signal " + strconv.Itoa(int(sig))
}
