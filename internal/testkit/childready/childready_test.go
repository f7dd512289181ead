package childready

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestChild is the child of the tests below when PI_CHILDREADY says what to
// do; otherwise it does nothing.
func TestChild(t *testing.T) {
	switch os.Getenv("PI_CHILDREADY") {
	case "ready":
		Signal()
		select {} // stay alive until killed
	case "exit":
		os.Exit(0)
	}
}

func child(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestChild$")
	cmd.Env = append(os.Environ(), "PI_CHILDREADY="+mode)
	return cmd
}

func TestStartReturnsOnceReady(t *testing.T) {
	cmd := child("ready")
	Start(t, cmd)
	// The child said ready and is still running (Signal did not end it).
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("child is gone: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
}

// TestStartFailsWhenTheChildDies: a child that exits without a word makes
// Start fail at once (EOF), not after the timeout.
func TestStartFailsWhenTheChildDies(t *testing.T) {
	ft := &fakeT{TB: t}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(ft, child("exit"))
	}()
	<-done
	if !ft.failed {
		t.Fatal("Start did not fail for a child that exited without signalling")
	}
	if d := time.Since(start); d > Timeout/2 {
		t.Errorf("took %s: the EOF was not noticed", d)
	}
}

// fakeT records a Fatal and ends the goroutine as testing.T does.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatal(args ...any) {
	f.failed = true
	runtime.Goexit()
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = true
	runtime.Goexit()
}
