package app

import (
	"context"
	"os"
	"path/filepath"

	"github.com/pi-go/pi/internal/sandbox"
	"github.com/pi-go/pi/runtime/tool"
)

// confine wraps perm (nil: allow) for Options.ConfineFileTools: a call
// that opens a path outside the run's own folders — the project root, the
// working directory and $TMPDIR, real paths — is denied, whatever the
// rules say. The built-in file tools run in pi's process, outside the
// kernel sandbox of bash, so for a pi fleet run this is what keeps them to
// its workspace (reads included).
func (r *Runtime) confine(perm tool.PermissionFunc) tool.PermissionFunc {
	var roots []string
	for _, d := range []string{r.cfg.ProjectRoot, r.cwd, os.TempDir()} {
		if d == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		roots = append(roots, d)
	}
	return func(ctx context.Context, call tool.CallInfo) (tool.PermissionDecision, error) {
		for _, p := range call.Paths {
			inside := false
			for _, root := range roots {
				if sandbox.Within(p, root) {
					inside = true
					break
				}
			}
			if !inside {
				return tool.PermissionDecision{Verdict: tool.Deny, Rule: "confined to the workspace", Reason: p + " is outside this run's workspace"}, nil
			}
		}
		if perm == nil {
			return tool.PermissionDecision{Verdict: tool.Allow}, nil
		}
		return perm(ctx, call)
	}
}
