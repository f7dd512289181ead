//go:build darwin

package sandbox

import (
	"fmt"
	"path/filepath"
	"syscall"
)

// SeatbeltExec is macOS's sandbox-exec.
const SeatbeltExec = "/usr/bin/sandbox-exec"

// wrap is Wrap on macOS: sandbox-exec with p's profile, the paths made
// real (/tmp is /private/tmp). Untested on hardware (docs/sandbox.md).
func wrap(p Policy, _ string, argv, env []string) ([]string, []string, error) {
	if p.Network == NetworkAllow {
		return nil, nil, fmt.Errorf("sandbox network %q is built for Linux only (its forwarder needs a network namespace): use %q or %q on macOS", NetworkAllow, NetworkOn, NetworkOff)
	}
	p.Writable, p.Protected = realPaths(p.Writable), realPaths(p.Protected)
	out := append([]string{SeatbeltExec, "-p", p.SeatbeltProfile()}, argv...)
	return out, env, nil
}

// realPaths resolves the links of each path (of its folder, for a path
// that does not exist).
func realPaths(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		} else if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			p = filepath.Join(d, filepath.Base(p))
		}
		out = append(out, p)
	}
	return out
}

// SysProcAttr is nil on macOS: sandbox-exec needs nothing of the start.
func SysProcAttr(Policy) *syscall.SysProcAttr { return nil }
