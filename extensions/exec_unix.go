//go:build unix

package extensions

import (
	"os/exec"
	"syscall"
)

// killGroup makes cmd run in its own process group and, when its context
// ends, kills the whole group, so children it started do not outlive it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
