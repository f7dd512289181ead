package app

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pi-go/pi/internal/sandbox"
	"github.com/pi-go/pi/internal/sandbox/proxy"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/tool"
	"github.com/pi-go/pi/tools/builtin"
)

// SandboxHelperArg is the first argument that makes a program linking
// runtime/app the sandbox's helper. Every such program serves it before
// main runs (the package init of internal/sandbox), so an embedder needs
// nothing; Options.SandboxHelper names another helper program when the
// running one cannot be executed again (docs/sandbox.md).
const SandboxHelperArg = sandbox.HelperArg

// SandboxSupport is what the kernel offers the sandbox (pi doctor).
type SandboxSupport = sandbox.Support

// sandboxProbe is the kernel's support, found once per process (a
// variable for the tests of kernels without it).
var sandboxProbe = sync.OnceValue(sandbox.Probe)

// ProbeSandbox reports what the kernel offers the sandbox: the Landlock
// ABI version, whether user namespaces can be made, and what is missing.
func ProbeSandbox() SandboxSupport { return sandboxProbe() }

// SandboxModes are the sandbox modes, weakest first (for flag help).
func SandboxModes() []string { return slices.Clone(sandbox.Modes) }

// DefaultSandboxWritable are the extra writable roots when no pi.toml
// sets [sandbox] writable: the user's cache folder, where builds keep
// theirs (Go's GOCACHE, pip's, ...). Each call returns a new slice.
func DefaultSandboxWritable() []string { return []string{"~/.cache"} }

// sandboxPolicy turns [sandbox] into the policy of the bash tool: nil
// when the mode needs no sandbox. An explicit mode (pi.toml or --sandbox)
// the kernel cannot give is an error naming what is missing; the implicit
// default then runs commands unsandboxed with one warning (configured).
func (r *Runtime) sandboxPolicy() (*sandbox.Policy, error) {
	s := r.cfg.Sandbox
	mode := cmp.Or(s.Mode, sandbox.ModeWorkspaceWrite)
	network := cmp.Or(s.Network, sandbox.NetworkOn)
	p := &sandbox.Policy{Mode: mode, Network: network}
	if !p.Active() {
		return nil, nil
	}
	// An explicit mode is checked now; the default when the first command
	// runs (bashSandbox): finding out costs a process start (milliseconds)
	// that a run without bash should not pay.
	r.boxImplicit = s.Mode == "" && network == sandbox.NetworkOn
	if !r.boxImplicit {
		if sup := ProbeSandbox(); sup.Missing != "" {
			at := cmp.Or(s.ModeAt, "sandbox.network")
			return nil, fmt.Errorf("sandbox %s (%s) cannot run here: %s", mode, at, sup.Missing)
		}
	}
	home, _ := os.UserHomeDir()
	root := r.cfg.ProjectRoot
	extra := s.Writable
	if extra == nil {
		extra = expandHome(DefaultSandboxWritable(), home)
		for _, d := range extra {
			_ = os.MkdirAll(d, 0o700) // a root that does not exist cannot be granted
		}
	}
	p.Writable = uniqueAbs(append([]string{root, r.cwd, "/tmp", os.TempDir()}, expandHome(extra, home)...))
	p.Protected = uniqueAbs(protectedPaths(root, r.cwd, r.piHome))
	if len(r.opts.SandboxPrivate) > 0 {
		p.Private = uniqueAbs(r.opts.SandboxPrivate)
	}
	if network == sandbox.NetworkAllow {
		px, err := proxy.Start(s.AllowHosts)
		if err != nil {
			return nil, err
		}
		r.closers = append(r.closers, func() { px.Close() })
		p.Proxy, p.AllowHosts = px.Socket, slices.Clone(s.AllowHosts)
	}
	// pi's home and cache must exist to be protected (a bind mount needs
	// something to cover): under a writable root a command could make
	// them, planting a trust.json or native code pi then loads.
	for _, d := range []string{r.piHome, config.CacheDir(r.piHome)} {
		if d == "" {
			continue
		}
		for _, w := range p.Writable {
			if sandbox.Within(d, w) {
				_ = os.MkdirAll(d, 0o700)
				break
			}
		}
	}
	return p, nil
}

// protectedPaths are the paths a command may not write even inside a
// writable root: the project's .git, and .pi and pi.toml in every folder
// from cwd up to the project root (where pi looks for them), pi's home
// and its compilation cache.
func protectedPaths(root, cwd, piHome string) []string {
	out := append([]string{filepath.Join(root, ".git")}, gitDirs(root)...)
	for dir := cwd; ; dir = filepath.Dir(dir) {
		out = append(out, filepath.Join(dir, ".pi"), filepath.Join(dir, config.FileName))
		if dir == root || !sandbox.Within(dir, root) || dir == filepath.Dir(dir) {
			break
		}
	}
	if piHome != "" {
		out = append(out, piHome, config.CacheDir(piHome))
	}
	return out
}

// gitDirs are the git folders a .git file (a worktree's, a submodule's)
// points to, with their common folder (hooks and config live there): they
// may lie in a writable root too (/tmp). None when .git is a folder.
func gitDirs(root string) []string {
	data, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return nil
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return nil
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	out := []string{dir}
	if common, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(dir, c)
		}
		out = append(out, filepath.Clean(c))
	}
	return out
}

// expandHome makes "~/x" home/x (dropping it when the home is unknown).
func expandHome(dirs []string, home string) []string {
	var out []string
	for _, d := range dirs {
		if d == "~" || strings.HasPrefix(d, "~/") {
			if home == "" {
				continue
			}
			d = home + d[1:]
		}
		out = append(out, d)
	}
	return out
}

// uniqueAbs cleans paths, keeps the absolute ones, once each.
func uniqueAbs(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// SandboxInfo is how the runtime's bash commands are contained.
type SandboxInfo struct {
	// Mode and Network are the sandbox's; Mode is "off" when commands run
	// unsandboxed (Off says why, when it was not asked for).
	Mode, Network string
	// Writable are the writable roots, Protected the read-only paths
	// inside them (both as configured; missing ones are skipped).
	Writable, Protected []string
	// Off says why the default sandbox is off ("" when it is not).
	Off string
}

// Sandbox reports how the runtime's bash commands are contained (now: in
// plan mode, read-only).
func (r *Runtime) Sandbox() SandboxInfo {
	p := r.bashSandbox()
	if p == nil {
		info := SandboxInfo{Mode: sandbox.ModeOff, Network: cmp.Or(r.cfg.Sandbox.Network, sandbox.NetworkOn)}
		if r.box != nil {
			info.Off = ProbeSandbox().Missing
		}
		return info
	}
	return SandboxInfo{Mode: p.Mode, Network: p.Network, Writable: slices.Clone(p.Writable), Protected: slices.Clone(p.Protected)}
}

// configured is the configured sandbox, once the kernel is known to give
// it: an implicit default the kernel cannot give is dropped, with one
// warning, at the first command.
func (r *Runtime) configured() *sandbox.Policy {
	if r.box == nil || !r.boxImplicit {
		return r.box
	}
	r.boxOnce.Do(func() {
		if sup := ProbeSandbox(); sup.Missing != "" {
			r.boxOff = true
			r.warn("commands run without the sandbox: " + sup.Missing + " (pi doctor tells more; [sandbox] mode = \"off\" silences this)")
		}
	})
	if r.boxOff {
		return nil
	}
	return r.box
}

// unsandboxed reports whether the permission rules take the bash command
// out of the sandbox: every command in it decided by a rule with sandbox =
// "off" (permission.Result.SandboxOff). Never in plan mode.
func (r *Runtime) unsandboxed(command string) bool {
	if r.policy == nil || r.plan.Load() {
		return false
	}
	input, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		return false
	}
	return r.policy.Check("bash", input, nil).SandboxOff
}

// RerunQuestion is the question a person is asked after the sandbox
// refused part of a bash call; the refusal lines follow it.
const RerunQuestion = "Re-run this command once outside the sandbox?"

// askRerun asks the person, through the approver, whether a bash call the
// sandbox refused something of may run once more outside it. Never
// without a person (no approver, or --yes's YesApprover) and never in
// plan mode; "always" counts as once.
func (r *Runtime) askRerun(ctx context.Context, command string, refused []string) bool {
	ap := r.approver()
	if ap == nil || r.plan.Load() {
		return false
	}
	if _, yes := ap.(YesApprover); yes {
		return false
	}
	r.rerunAsk.Lock()
	defer r.rerunAsk.Unlock()
	input, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		return false
	}
	ans, err := ap.Approve(ctx, tool.ApprovalRequest{Call: tool.CallInfo{Name: "bash", Input: input},
		Questions: []string{RerunQuestion + " " + strings.Join(refused, "; ")}})
	return err == nil && ans != Decline
}

// SandboxServer reports how the runtime's bash commands start under the
// sandbox: through its fork server (started now if none runs), or, when
// served is false, in the per-call helper, with why the server is not
// used (the policy is not one a server serves, or its start failed: its
// error). Nil error and false: no sandbox. For pi doctor.
func (r *Runtime) SandboxServer() (served bool, why error) {
	p := r.bashSandbox()
	if p == nil {
		return false, nil
	}
	return builtin.SandboxServer(*p, r.opts.SandboxHelper)
}
