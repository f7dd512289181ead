// Package cgroup runs processes in cgroup v2 groups of their own, so that
// everything they start, however it detaches (a new session, a double fork,
// a new process group, a scrubbed environment), can be listed and killed as
// one, without a race against fork.
//
// Detect finds the cgroup v2 group the calling process is in and checks that
// the hierarchy is mounted writable; Parent.New and Group.New create groups
// below it (mkdir). A process is started directly inside a group with
// Group.Attach, which sets SysProcAttr.UseCgroupFD (clone3 with
// CLONE_INTO_CGROUP, Linux 5.7 or later), so there is no moment when it runs
// outside. Group.Kill kills every process of a group and of its child groups
// at once through cgroup.kill (Linux 5.14 or later), else by freezing the
// group (cgroup.freeze, Linux 5.2) and SIGKILLing each process it lists until
// none is left. Group.Remove deletes the group directories afterwards.
//
// The package keeps no state of its own: a Group is a directory name, and
// nothing is killed or removed unless a caller asks for it on its Group.
//
// What a group does not contain: a process of the group that has write
// access to the cgroup.procs files of another group and of the common
// ancestor can move itself out (any process of the user that owns a
// delegated subtree can move within that subtree, and root anywhere). Such a
// process is no longer listed or killed here; callers keep a second net for
// it (pi's bash tool scans /proc for its call tag and its orphans).
//
// Everywhere but Linux, Detect reports ErrUnavailable and nothing else is
// used.
package cgroup

import "errors"

// ErrUnavailable is wrapped by Detect's error when no writable cgroup v2
// hierarchy is there to use: not Linux, cgroup v1 only, the hierarchy
// mounted read-only (a container's default), or this process's group not
// found in it.
var ErrUnavailable = errors.New("cgroup v2 not available")
