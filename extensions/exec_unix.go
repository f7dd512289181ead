//go:build unix

package extensions

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/pi-go/pi/internal/cgroup"
	"github.com/pi-go/pi/internal/procs"
)

// startOwn starts cmd as one of pi's own children (procs.StartOwn), so
// that a bash call's clean-up never takes it for a process the call left.
func startOwn(cmd *exec.Cmd) (unmark func(), err error) {
	return procs.StartOwn(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
}

// runContained runs the command newCmd makes (built with
// exec.CommandContext) so that nothing it starts outlives it: in a session
// of its own (so a process group that nothing it starts can leave for pi's)
// and, where a writable cgroup v2 hierarchy is there, directly inside a
// cgroup of its own. When the context ends, the whole cgroup (else the
// process group) is killed; when the command has ended, whatever it left
// running in its cgroup is killed and the cgroup removed. newCmd is called
// again, for a start without a cgroup, when starting in the cgroup fails in
// a way the cgroup may cause.
func runContained(newCmd func() *exec.Cmd) error {
	g := newExecGroup()
	cmd := newCmd()
	base := cmd.SysProcAttr
	contain(cmd, base, g)
	release := func() {}
	if g != nil {
		var err error
		if release, err = g.Attach(cmd.SysProcAttr); err != nil {
			_ = g.Remove()
			g = nil
			contain(cmd, base, nil)
		}
	}
	unmark, err := startOwn(cmd)
	release()
	if err != nil && g != nil {
		_ = g.Remove()
		g = nil
		if cgroup.StartErrorIsCgroup(err) {
			cmd = newCmd()
			contain(cmd, cmd.SysProcAttr, nil)
			unmark, err = startOwn(cmd)
		}
	}
	if err != nil {
		return err
	}
	defer unmark()
	err = cmd.Wait()
	if g != nil {
		_ = g.Kill()
		_ = g.WaitEmpty(2 * time.Second)
		_ = g.Remove()
	}
	return err
}

// contain sets cmd's SysProcAttr to base (the sandbox's namespaces, as
// newCmd made it) with a session of its own, and its kill on cancellation: the cgroup g whole
// when there is one, and the process group.
func contain(cmd *exec.Cmd, base *syscall.SysProcAttr, g *cgroup.Group) {
	attr := &syscall.SysProcAttr{}
	if base != nil {
		a := *base
		attr = &a
	}
	attr.Setsid = true
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error {
		if g != nil {
			_ = g.Kill()
		}
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// newExecGroup creates a cgroup for one exec, pi-<pid>-<random> under pi's
// own cgroup, or returns nil where there are no usable cgroups.
func newExecGroup() *cgroup.Group {
	p, err := cgroup.Detect()
	if err != nil {
		return nil
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	g, err := p.New("pi-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:]))
	if err != nil {
		return nil
	}
	return g
}
