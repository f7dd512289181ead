package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPermissionsShowSandboxOff: pi permissions check says when a bash
// call would leave the sandbox, and list shows the rules that let it.
func TestPermissionsShowSandboxOff(t *testing.T) {
	home := cliEnv(t)
	toml := "[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"docker\", \"*\"]\ndecision = \"allow\"\nsandbox = \"off\"\n"
	if err := os.WriteFile(filepath.Join(home, "pi.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	runCLI(t, "", "permissions", "check", "bash", `{"command":"docker ps"}`).check(t, 0, `off (every command is covered by a rule with sandbox = "off")`, "")
	if r := runCLI(t, "", "permissions", "check", "bash", `{"command":"docker ps; ls"}`); r.code != 0 || strings.Contains(r.stdout, "sandbox:") {
		t.Errorf("a call with another command is said to leave the sandbox:\n%s", r.stdout)
	}
	runCLI(t, "", "permissions", "list").check(t, 0, "bash docker * sandbox=off", "")
	runCLI(t, "", "permissions", "list", "--json").check(t, 0, `"sandbox": "off"`, "")
}
