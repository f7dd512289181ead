//go:build !linux

package sandbox

import "syscall"

// Support is what the kernel offers the sandbox.
type Support struct {
	LandlockABI int
	UserNS      bool
	Missing     string
}

// Probe reports that the sandbox is Linux only.
func Probe() Support {
	return Support{Missing: "the sandbox needs Linux (Landlock and user namespaces); this system has neither"}
}

// SysProcAttr is nil off Linux.
func SysProcAttr(Policy) *syscall.SysProcAttr { return nil }
