//go:build linux

package extensions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/sandbox"
)

// TestExecUnderKernelSandbox: an extension's granted exec runs under the
// kernel sandbox of Options.Sandbox (the bash tool's): a write outside the
// workspace and one into the project's .git are refused and named on the
// command's stderr, a write in the project works; the control (no
// sandbox) writes both.
func TestExecUnderKernelSandbox(t *testing.T) {
	if s := sandbox.Probe(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	for _, boxed := range []bool{false, true} {
		base, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		root, outside := filepath.Join(base, "project"), filepath.Join(base, "outside")
		for _, d := range []string{root + "/.git", outside} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		policy := &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn,
			Writable: []string{root}, Protected: []string{root + "/.git"}}
		opts := extensions.Options{ProjectRoot: root, Cwd: root}
		if boxed {
			opts.Sandbox = func() *sandbox.Policy { return policy }
		}
		h := newHost(t, opts)
		e := load(t, h, extensions.Spec{Name: "sandbox", Path: goGuest(t, sandboxGuest), Grants: extensions.Grants{FS: []string{"ro:."}, Exec: []string{"bash"}}})
		b, _ := json.Marshal(map[string]any{"argv": []string{"bash", "-c",
			"echo in > in.txt; echo pwned > " + outside + "/x; echo pwned > .git/hook; echo done"}})
		r := run(context.Background(), tools(t, e), nil, "exec", string(b))
		if r.IsError {
			t.Fatalf("exec: %s", r.Text())
		}
		var res struct{ Stdout, Stderr string }
		if err := json.Unmarshal([]byte(r.Text()), &res); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Stdout, "done") {
			t.Fatalf("boxed=%v: %s", boxed, r.Text())
		}
		if _, err := os.Stat(root + "/in.txt"); err != nil {
			t.Fatalf("boxed=%v: the project was not writable: %s", boxed, r.Text())
		}
		_, errOut := os.Stat(outside + "/x")
		_, errGit := os.Stat(root + "/.git/hook")
		if !boxed {
			if errOut != nil || errGit != nil {
				t.Fatalf("control: the writes failed without the sandbox: %s", r.Text())
			}
			continue
		}
		if errOut == nil || errGit == nil {
			t.Fatalf("the sandboxed exec wrote outside the workspace or into .git: %s", r.Text())
		}
		for _, want := range []string{"Sandbox refused: write outside the workspace: " + outside + "/x", "Sandbox refused: write to a protected path: " + root + "/.git/hook"} {
			if !strings.Contains(res.Stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, res.Stderr)
			}
		}
	}
}
