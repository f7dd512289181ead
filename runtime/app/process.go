package app

import "github.com/pi-go/pi/internal/procs"

// BecomeSubreaper makes the calling process a child subreaper (Linux's
// PR_SET_CHILD_SUBREAPER; elsewhere it does nothing and returns nil). It is
// a property of the whole process, so the program decides: call it once,
// at start, before any runtime runs a bash call; the pi command does.
//
// With it, a process that a bash call orphans (a double fork, a daemon) is
// re-parented to this process, so the runtime that owns the call can still
// find and end it, even when it left the call's session, dropped the call's
// PI_BASH_CALL tag and (with the rights to) moved out of its cgroup.
// Without it, orphans are re-parented to init (or to a subreaper above this
// process); Runtime.Close and a call's timeout still end every process in
// the call's cgroup (where cgroup v2 is writable), session or process
// group, or carrying its tag, but an orphan that left all of those is
// found by nothing and keeps running. See docs/embedding.md.
//
// # Errors
//
// The prctl error when the kernel refuses.
func BecomeSubreaper() error { return procs.BecomeSubreaper() }
