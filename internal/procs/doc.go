// Package procs owns the control of the processes that commands started for
// pi (the bash tool's shells) leave behind: each command runs in a session
// of its own and, where a writable cgroup v2 hierarchy is there, in a cgroup
// of its own (internal/cgroup), with a tag in its environment
// (MarkerEnv=<instance>-<set>-<n>) that every process it starts inherits.
// Terminating a call ends every process of it, however it tried to escape;
// closing a Set ends every process of the calls started through it, and
// none of another Set's.
//
// A Set is the owner: one per runtime (tools/builtin's Processes), created
// and closed by whoever builds the bash tool. What is process-wide is so
// because the operating system makes it so, and is explicit:
//
//   - BecomeSubreaper, which the program calls once (the child-subreaper
//     flag is a property of the process): orphans of calls are then
//     re-parented to pi, where the orphan rule below can find them;
//   - the registry of running calls of every Set, the lock that keeps a
//     scan from missing a shell being started, and the zombies of pi's own
//     children: a call's kill must know every other call of the process
//     (of any Set) to spare it, and only the process can reap its
//     children.
//
// There is no "kill every call of the process": each Set kills its own.
package procs

// MarkerEnv is the environment variable that tags every process a call
// starts: MarkerEnv=<instance>-<set>-<call>, where instance tells this
// process's calls from another pi's.
const MarkerEnv = "PI_BASH_CALL"
