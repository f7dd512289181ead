package builtin

import (
	"os"
	"testing"
)

// TestMain kills what the tests' bash calls left running and removes their
// cgroups, as the CLI does when pi exits.
func TestMain(m *testing.M) {
	code := m.Run()
	KillAllBash()
	os.Exit(code)
}
