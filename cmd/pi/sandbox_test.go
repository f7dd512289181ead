package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxCheck: `pi sandbox check` runs the command under the default
// sandbox and names what it refused; --sandbox off is the control;
// `pi doctor` reports the kernel's support.
func TestSandboxCheck(t *testing.T) {
	cliEnv(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := runCLI(t, "", "doctor", "--cwd", dir)
	if !strings.Contains(doc.stdout, "kernel: Landlock") {
		t.Fatalf("pi doctor: exit %d\n%s%s", doc.code, doc.stdout, doc.stderr)
	}
	if strings.Contains(doc.stdout, "missing:") {
		t.Skipf("kernel sandbox unavailable: %s", doc.stdout)
	}
	doc.check(t, 0, "sandbox: workspace-write, network on", "")
	doc.check(t, 0, "commands start through the sandbox's fork server", "")

	hook := filepath.Join(dir, ".git", "hooks-pre-commit")
	r := runCLI(t, "", "sandbox", "check", "--cwd", dir, "--", "sh", "-c", "echo ok > built; echo x > "+hook)
	if _, err := os.Stat(filepath.Join(dir, "built")); err != nil {
		t.Fatalf("the project was not writable: %s%s", r.stdout, r.stderr)
	}
	if _, err := os.Stat(hook); err == nil {
		t.Fatalf("a write into .git went through: %s", r.stdout)
	}
	r.check(t, exitError, "Sandbox refused: write to a protected path: "+hook, "")

	r = runCLI(t, "", "sandbox", "check", "--cwd", dir, "--sandbox", "off", "--", "sh", "-c", "echo x > "+hook)
	r.check(t, 0, "sandbox: off", "")
	if _, err := os.Stat(hook); err != nil {
		t.Fatalf("control: --sandbox off did not write: %s", r.stdout)
	}

	r = runCLI(t, "", "sandbox", "check", "--cwd", dir, "--sandbox", "loose", "--", "true")
	r.check(t, exitError, "", `unknown sandbox mode "loose"`)
}
