package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestRepositoryPiTomlApplies runs `pi tools list` in this package's folder
// (inside the repository): the project search finds the repository's own
// pi.toml at the root, every tools.active name in it is a real tool (an
// unknown one would fail the command), and it applies without trust (no
// warning). The other tests here pass --cwd with a temporary folder, so this
// file does not shape them.
func TestRepositoryPiTomlApplies(t *testing.T) {
	isolate(t)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"tools", "list", "--cwd", "."}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	for _, name := range []string{"read", "bash", "edit", "write", "grep", "find", "ls"} {
		if !regexp.MustCompile(`(?m)^` + name + `\s+yes\s`).MatchString(stdout.String()) {
			t.Errorf("%s is not active: the repository's pi.toml was not applied\n%s", name, stdout.String())
		}
	}
}
