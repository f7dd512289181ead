// Package permission decides whether a tool call may run, from rules written
// as data in pi.toml ([permissions]): allow, ask or deny, by tool name, by the
// parsed bash command, by the real paths a file tool opens, or by any tool's
// arguments.
//
// Bash commands are parsed with a real shell parser (mvdan.cc/sh/v3/syntax),
// and every simple command the script can run is matched on its own argv: in
// pipelines and lists, subshells, command and process substitutions,
// functions, loop and if bodies, behind wrappers such as sudo, env, nice,
// timeout, xargs, find -exec and `bash -c` with a literal script. The
// strictest decision over all of them wins (deny > ask > allow > default),
// so an allowed prefix cannot hide a denied command. A command pi cannot see
// (a command name that is not literal, eval of something not literal, a
// shell that reads its commands from a pipe, a script that does not parse,
// a value bash evaluates a second time: arithmetic on a variable pi cannot
// prove is a number, ${x@P}, ${!x}, a variable name with a subscript,
// PS4 or BASH_ENV — see evaluate.go) gets ask, or deny when the default is
// deny. Commands renamed by hash -p or an alias are also decided as what
// they run.
//
// The package is a leaf of pi (it imports no other pi package): runtime/config
// validates rules with Rule.Check at load time, and runtime/app turns a
// Policy into the call pipeline's permission check.
package permission
