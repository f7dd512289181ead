// Package childready lets a test wait until a subprocess it started (usually
// the test binary itself, re-run as a helper) says it is ready, on a pipe
// the child inherits as fd 3: an observable event, instead of a sleep or a
// poll for a marker file. Tests only.
package childready

import (
	"bufio"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Timeout is how long Start waits for the child's word.
const Timeout = 20 * time.Second

// Start starts cmd with a pipe as its fd 3 (cmd.ExtraFiles must be empty)
// and returns once the child has called Signal. The test fails, and the
// child is killed, when the child ends or stays silent for Timeout first.
func Start(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd.ExtraFiles = []*os.File{w}
	err = cmd.Start()
	w.Close() // the child holds the only write end: its exit means EOF
	if err != nil {
		t.Fatal(err)
	}
	r.SetReadDeadline(time.Now().Add(Timeout))
	line, err := bufio.NewReader(r).ReadString('\n')
	if line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s never got ready: read %q, %v", cmd.Path, line, err)
	}
}

// Signal is the child's side of Start: it says "ready" on fd 3 and closes
// it. Call it once.
func Signal() {
	f := os.NewFile(3, "childready")
	f.WriteString("ready\n")
	f.Close()
}
