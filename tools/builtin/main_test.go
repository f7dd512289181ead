package builtin

import (
	"fmt"
	"os"
	"testing"

	"github.com/pi-go/pi/internal/procs"
)

// testProcesses owns the processes of the tests' bash calls that name no
// Processes of their own.
var testProcesses = NewProcesses()

// TestMain makes the test binary a child subreaper, as pi's main does, and
// ends what the tests' bash calls left running (and removes their cgroups)
// when they are done, as a runtime's Close does.
func TestMain(m *testing.M) {
	if err := procs.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	testProcesses.Close()
	os.Exit(code)
}
