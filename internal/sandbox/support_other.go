//go:build !linux && !darwin

package sandbox

import (
	"errors"
	"syscall"
)

// Support is what the kernel offers the sandbox.
type Support struct {
	LandlockABI int
	UserNS      bool
	Missing     string
}

// Probe reports that the sandbox needs Linux or macOS.
func Probe() Support {
	return Support{Missing: "the sandbox needs Linux (Landlock and user namespaces) or macOS (sandbox-exec)"}
}

// SysProcAttr is nil here.
func SysProcAttr(Policy) *syscall.SysProcAttr { return nil }

// wrap refuses: there is no sandbox on this system.
func wrap(Policy, string, []string, []string) ([]string, []string, error) {
	return nil, nil, errors.New("the sandbox needs Linux or macOS")
}
