//go:build !linux

package cgroup

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// Parent is a cgroup v2 directory in which groups can be created; there is
// none off Linux.
type Parent struct{}

// Detect reports ErrUnavailable: cgroups are Linux only.
func Detect() (Parent, error) {
	return Parent{}, fmt.Errorf("%w: %s has no cgroups", ErrUnavailable, runtime.GOOS)
}

// Dir is empty.
func (p Parent) Dir() string { return "" }

// New reports ErrUnavailable.
func (p Parent) New(name string) (*Group, error) { _, err := Detect(); return nil, err }

// Open reports ErrUnavailable.
func (p Parent) Open(name string) (*Group, error) { _, err := Detect(); return nil, err }

// Children reports ErrUnavailable.
func (p Parent) Children() ([]string, error) { _, err := Detect(); return nil, err }

// Group is never created off Linux; its methods report ErrUnavailable.
type Group struct{}

// Dir is empty.
func (g *Group) Dir() string { return "" }

// New reports ErrUnavailable.
func (g *Group) New(name string) (*Group, error) { _, err := Detect(); return nil, err }

// Attach reports ErrUnavailable.
func (g *Group) Attach(attr *syscall.SysProcAttr) (release func(), err error) {
	_, err = Detect()
	return func() {}, err
}

// StartErrorIsCgroup is false: no process is started in a group.
func StartErrorIsCgroup(err error) bool { return false }

// Holds is false.
func (g *Group) Holds(pid int) bool { return false }

// Pids reports ErrUnavailable.
func (g *Group) Pids() ([]int, error) { _, err := Detect(); return nil, err }

// Populated reports ErrUnavailable.
func (g *Group) Populated() (bool, error) { _, err := Detect(); return false, err }

// Signal reports ErrUnavailable.
func (g *Group) Signal(sig syscall.Signal) (int, error) { _, err := Detect(); return 0, err }

// Kill reports ErrUnavailable.
func (g *Group) Kill() error { _, err := Detect(); return err }

// WaitEmpty reports ErrUnavailable.
func (g *Group) WaitEmpty(timeout time.Duration) error { _, err := Detect(); return err }

// Remove reports ErrUnavailable.
func (g *Group) Remove() error { _, err := Detect(); return err }

// OpenDir fails: there are no cgroups here.
func (g *Group) OpenDir() (*os.File, error) { _, err := Detect(); return nil, err }
