//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// landlockABI is the kernel's Landlock ABI version.
//
// # Errors
//
// Landlock missing or disabled, saying so.
func landlockABI() (int, error) {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 1 {
		return 0, errors.New("the kernel has no Landlock (Linux 5.13 or later with landlock in the lsm= boot list is needed)")
	}
	return v, nil
}

// Support is what the kernel offers the sandbox.
type Support struct {
	// LandlockABI is the Landlock ABI version, 0 without Landlock.
	LandlockABI int
	// UserNS says whether a user namespace (with mount and network
	// namespaces) can be made.
	UserNS bool
	// Missing says what is missing, one sentence; empty when the sandbox
	// can run.
	Missing string
}

// Probe finds out what the kernel offers, by starting the helper-free
// check of a user namespace (a short-lived child of /bin/true in new user,
// mount and network namespaces).
func Probe() Support {
	var s Support
	var why []string
	if v, err := landlockABI(); err == nil {
		s.LandlockABI = v
	} else {
		why = append(why, err.Error())
	}
	if err := probeUserNS(); err == nil {
		s.UserNS = true
	} else {
		why = append(why, err.Error())
	}
	s.Missing = strings.Join(why, "; ")
	return s
}

// probeUserNS starts `true` in new user, mount and network namespaces.
func probeUserNS() error {
	bin := "/bin/true"
	if _, err := os.Stat(bin); err != nil {
		if p, err := exec.LookPath("true"); err == nil {
			bin = p
		}
	}
	cmd := exec.Command(bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("user namespaces are not available (%v): check kernel.unprivileged_userns_clone, user.max_user_namespaces and AppArmor's restrict_unprivileged_userns", err)
	}
	return nil
}
