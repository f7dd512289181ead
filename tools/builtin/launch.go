package builtin

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/pi-go/pi/internal/procs"
	"github.com/pi-go/pi/internal/sandbox"
)

// sandboxServers are the program's sandbox fork servers (internal/sandbox,
// docs/sandbox.md): one per sandbox policy, started by the first command
// under it, each a child of pi that no call's clean-up takes for one of
// its processes (procs.StartOwn). They are the program's, like the
// processes' registry: every runtime's bash calls under one policy share
// its server, which holds nothing of a call.
var sandboxServers = sandbox.NewServers(procs.StartOwn)

// launch is how a shell starts: argv with env (and attr, the per-call
// helper's namespaces), or, when via is set, through the sandbox's fork
// server.
type launch struct {
	argv, env []string
	attr      *syscall.SysProcAttr
	via       func(*exec.Cmd, *procs.Placement) error
	// ready starts a new fork server after via failed with
	// sandbox.ErrServerGone (never under the processes' lock, which
	// starting one takes).
	ready func() bool
}

// shellLaunch is how `SHELL -c COMMAND` starts with env under policy: as
// it is when the policy is not active; through the policy's fork server
// when one serves it (the cheap way: no program start per call); else
// inside the per-call helper (sandbox.Wrap).
func shellLaunch(policy sandbox.Policy, opts BashOptions, shell, command string, env []string) (launch, error) {
	argv := []string{shell, "-c", command}
	if policy.Active() && !opts.sandboxPerCall && filepath.IsAbs(shell) && sandboxServers.Ready(policy, opts.SandboxHelper) {
		helper := opts.SandboxHelper
		return launch{argv: argv, env: env, via: func(cmd *exec.Cmd, pl *procs.Placement) error {
			var cgroup *os.File
			if pl != nil {
				cgroup = pl.Dir
			}
			placed, err := sandboxServers.Start(policy, helper, cmd, cgroup)
			if pl != nil {
				pl.Placed = placed
			}
			return err
		}, ready: func() bool { return sandboxServers.Ready(policy, helper) }}, nil
	}
	argv, env, err := sandbox.Wrap(policy, opts.SandboxHelper, argv, env)
	if err != nil {
		return launch{}, err
	}
	return launch{argv: argv, env: env, attr: sandbox.SysProcAttr(policy)}, nil
}

// SandboxServer starts (if none runs yet) the fork server that serves
// bash commands under p with helper ("" for the running program) and
// reports whether it runs; when it does not, why (the policy is not one a
// server serves, or its start failed: then each command starts in the
// per-call helper, docs/sandbox.md). For pi doctor.
func SandboxServer(p sandbox.Policy, helper string) (bool, error) {
	if sandboxServers.Ready(p, helper) {
		return true, nil
	}
	return false, sandboxServers.Failed(p, helper)
}
