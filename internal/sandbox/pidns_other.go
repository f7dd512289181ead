//go:build !linux

package sandbox

import (
	"errors"
	"syscall"
)

// InitEnv: see pidns_linux.go; unused where there are no PID namespaces.
const InitEnv = "PI_PID_NAMESPACE_INIT"

// NamespaceInitAttr is nil: no PID namespaces on this system.
func NamespaceInitAttr() *syscall.SysProcAttr { return nil }

// ProbePIDNamespace says PID namespaces are Linux's.
func ProbePIDNamespace() error { return errors.New("PID namespaces are Linux's only") }

// InitValue is InitEnv's value (unused here).
func InitValue() string { return "" }
