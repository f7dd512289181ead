// Package sandbox owns the kernel sandbox of the commands pi runs for the
// model (the bash tool): the one place that knows Landlock and Linux
// namespaces. A Policy says what a command may write (its writable roots,
// minus the protected paths inside them: .git, .pi, pi.toml, pi's home)
// and whether it may reach the network; Wrap turns a command line into the
// command that runs it under the policy.
//
// Go runs no code of its own between fork and exec, so the restriction is
// applied by a small helper between them: the program re-executes itself
// (the helper, os.Executable by default) with the argument HelperArg. The
// helper is started in new user and mount namespaces (and a new network
// namespace with the network off); it maps its user, bind-mounts the
// protected paths read-only over themselves, restricts itself with
// Landlock (read everywhere, write only under the writable roots) and
// execs the command, so every process the command starts inherits the
// restriction, and nothing inside can undo it (Landlock forbids mount
// changes; root inside has no capability over the host).
//
// Starting the helper for every command costs a Go program's start, so
// the bash tool goes through Servers instead: the same helper started once
// per policy with ServerArg, which applies the policy to itself and then
// forks and execs each command pi sends it over a socket pair, as pi's
// child in the call's cgroup, each from a thread with a Landlock layer of
// its own (server_linux.go says what keeps it from being a way out).
//
// The helper runs from this package's init, before main: every program
// that links this package (pi, a test binary, a program embedding
// runtime/app) can serve as the helper of its own commands. Refusals
// turns the command's error output into the lines the model reads.
package sandbox
