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

// ProtectProcess keeps the calling process's memory and environment from
// every other process of the same user, above all from the processes the
// runtime starts (bash calls, MCP servers, extensions' exec children): on
// Linux it makes the process non-dumpable, so /proc/PID/environ, mem and fd
// of this process cannot be read and it cannot be ptraced without
// CAP_SYS_PTRACE. The API key a program read from its environment stays in
// that memory; without this, a bash call can read it back with
// `tr '\0' '\n' </proc/$PPID/environ`. Elsewhere it does nothing and
// returns nil. Like BecomeSubreaper it is a property of the whole process:
// call it once, at start; the pi command does. It also turns off core
// dumps of the process. See docs/security.md for what a same-user process
// outside the runtime's tree can still do.
//
// # Errors
//
// The prctl error when the kernel refuses.
func ProtectProcess() error { return procs.Undumpable() }
