//go:build linux

package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/sandbox"
)

// TestBashSandbox runs the bash tool under workspace-write (this test
// binary is the helper; the call still runs in its session and cgroup):
// a write in the project works, writes outside and to pi.toml are refused
// and named in the result, a pi.toml the command creates is removed; the
// same calls with the sandbox off are the control.
func TestBashSandbox(t *testing.T) {
	if s := sandbox.Probe(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	for _, mode := range []string{sandbox.ModeOff, sandbox.ModeWorkspaceWrite} {
		root := t.TempDir()
		project, outside := filepath.Join(root, "proj"), filepath.Join(root, "outside")
		for _, d := range []string{project + "/.git", outside} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		p := &sandbox.Policy{Mode: mode, Network: sandbox.NetworkOn, Writable: []string{project},
			Protected: []string{project + "/.git", project + "/.pi", project + "/pi.toml"}}
		script := `echo in > inside.txt; echo out > ` + outside + `/x; echo hook > .git/config; echo '[tools]' > pi.toml; echo done`
		r := bashCall(t, context.Background(), BashOptions{Sandbox: p}, project, map[string]any{"command": script}, nil)
		text := resultText(t, r)
		if _, err := os.Stat(project + "/inside.txt"); err != nil {
			t.Fatalf("%s: the project is not writable: %s", mode, text)
		}
		_, errOut := os.Stat(outside + "/x")
		_, errCfg := os.Stat(project + "/.git/config")
		_, errToml := os.Stat(project + "/pi.toml")
		if mode == sandbox.ModeOff {
			if errOut != nil || errCfg != nil || errToml != nil || strings.Contains(text, "Sandbox refused") {
				t.Fatalf("control: the writes failed with the sandbox off: %s", text)
			}
			continue
		}
		if errOut == nil || errCfg == nil || errToml == nil {
			t.Fatalf("sandbox let a write through (outside %v, .git/config %v, pi.toml %v): %s", errOut, errCfg, errToml, text)
		}
		for _, want := range []string{
			"Sandbox refused: write outside the workspace: " + outside + "/x (sandbox workspace-write)",
			"Sandbox refused: write to a protected path: " + project + "/.git/config",
			"Sandbox refused: creating " + project + "/pi.toml (pi's configuration is protected); removed",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("result lacks %q:\n%s", want, text)
			}
		}
	}
}
