//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
)

// Served reports whether a fork server serves p: never here.
func Served(Policy) bool { return false }

// Servers keeps the fork servers of a program: none here (the per-call
// sandbox-exec is the way).
type Servers struct{}

// NewServers returns an empty set.
func NewServers(func(start func() (pid int, err error)) (release func(), err error)) *Servers {
	return &Servers{}
}

// Ready is false here.
func (*Servers) Ready(Policy, string) bool { return false }

// Failed says there are no fork servers here.
func (*Servers) Failed(Policy, string) error { return errNoServers }

// Start refuses: there are no fork servers here.
func (*Servers) Start(Policy, string, *exec.Cmd, *os.File) (bool, error) {
	return false, errNoServers
}

// Close does nothing.
func (*Servers) Close() {}

// ErrServerGone is never returned here.
var ErrServerGone = errors.New("the sandbox server is gone")

var errNoServers = errors.New("the sandbox's fork server needs Linux")
