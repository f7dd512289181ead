package procs

import (
	"fmt"
	"os"
	"testing"
)

// TestMain makes the test binary a child subreaper, as pi's main does, so
// that the orphans of calls are re-parented to it.
func TestMain(m *testing.M) {
	if err := BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
