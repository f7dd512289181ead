//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/proc"
)

// escapesCommand starts the escape helper in the background of a bash
// command every hard way at once (double fork into pi's process group with a
// clean environment and SIGTERM ignored; a daemon that closes its
// descriptors; a fork bomb; nohup and disown) and waits until all of them
// are out; it returns the command and how many "ready" lines that makes.
func escapesCommand(h proc.Helper, log string) (string, int) {
	piPgid := "$(cut -d' ' -f5 /proc/$PPID/stat)"
	cmd := fmt.Sprintf(": > %[3]s; "+
		"%[1]s %[2]s log:%[3]s fork fork setpgid:%[4]s envclear ignoreterm sleep 2>>%[3]s.err & "+
		"%[1]s %[2]s log:%[3]s fork setsid fork closefds envclear sleep & "+
		"%[1]s %[2]s bomb:2 log:%[3]s ignoreterm sleep & "+
		"nohup %[1]s %[2]s log:%[3]s setsid sleep >/dev/null 2>&1 & disown; "+
		`while [ "$(grep -c ' ready' %[3]s)" -lt 7 ]; do sleep 0.01; done; echo ready`,
		h.Path, h.Token, log, piPgid)
	return cmd, 7
}

// startPi runs the real pi binary (the test binary as `pi`, on PATH during
// the tests) with args, in an isolated home.
func startPi(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	bin, err := exec.LookPath("pi")
	if err != nil {
		t.Skipf("no pi command on PATH: %v", err)
	}
	cmd := exec.Command(bin, args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "PI_HOME="+filepath.Join(home, ".pi"), "HOME="+home, "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "PI_TRUST=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = home
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, &out
}

// waitExit waits for pi to exit, at most limit.
func waitExit(t *testing.T, cmd *exec.Cmd, limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("pi did not exit within %v", limit)
		return nil
	}
}

// assertNoHelper checks that no helper process runs after pi exited.
func assertNoHelper(t *testing.T, h proc.Helper, out string) {
	t.Helper()
	if left := proc.Alive(h.Token); len(left) > 0 {
		t.Errorf("still running after pi exited: %v\npi's output:\n%s", left, out)
	}
}

// TestPiExitKillsBashEscapes runs the real pi binary, lets a bash call
// escape every way, ends pi (a signal during the call, a signal while pi
// waits for the model after the call returned, a normal exit) and checks
// through /proc that nothing of the call is left.
func TestPiExitKillsBashEscapes(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run("tool call, "+sig.String()+" during the call", func(t *testing.T) {
			h := proc.Escape(t)
			log := filepath.Join(t.TempDir(), "log")
			command, ready := escapesCommand(h, log)
			args, _ := json.Marshal(map[string]any{"command": command + "; sleep 600"})
			pi, out := startPi(t, "tool", "call", "bash", string(args))
			proc.WaitLog(t, log, " ready", ready, 30*time.Second)
			if err := pi.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = waitExit(t, pi, 10*time.Second)
			if !strings.Contains(out.String(), "Command aborted") {
				t.Errorf("pi's output does not say the call was aborted:\n%s", out)
			}
			assertNoHelper(t, h, out.String())
		})
		t.Run("print mode, "+sig.String()+" while waiting for the model", func(t *testing.T) {
			h := proc.Escape(t)
			log := filepath.Join(t.TempDir(), "log")
			command, ready := escapesCommand(h, log)
			args, _ := json.Marshal(map[string]any{"command": command})
			srv := openai.NewServer(t,
				openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: string(args)}}},
				openai.Reply{Text: "thinking", StallAfter: 1},
			)
			pi, out := startPi(t, "-p", "go", "--base-url", srv.URL, "--model", "M", "--api-key", "sk-test-0123456789abcdef")
			defer func() {
				if t.Failed() {
					b, _ := json.Marshal(srv.Requests())
					t.Logf("requests: %.300s", b)
					e, _ := os.ReadFile(log + ".err")
					t.Logf("helper errors: %s", e)
				}
			}()
			proc.WaitLog(t, log, " ready", ready, 30*time.Second)
			// The bash call returned once its result went back to the model.
			deadline := time.Now().Add(30 * time.Second)
			for len(srv.Requests()) < 2 {
				if time.Now().After(deadline) {
					t.Fatalf("the model never got the bash result; pi's output:\n%s", out)
				}
				time.Sleep(5 * time.Millisecond)
			}
			if len(proc.Alive(h.Token)) == 0 {
				t.Fatalf("nothing of the call runs after it returned")
			}
			if err := pi.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = waitExit(t, pi, 10*time.Second)
			assertNoHelper(t, h, out.String())
		})
	}
	t.Run("tool call, normal exit", func(t *testing.T) {
		h := proc.Escape(t)
		log := filepath.Join(t.TempDir(), "log")
		command, _ := escapesCommand(h, log)
		args, _ := json.Marshal(map[string]any{"command": command})
		pi, out := startPi(t, "tool", "call", "bash", string(args))
		if err := waitExit(t, pi, 30*time.Second); err != nil {
			t.Fatalf("pi: %v\n%s", err, out)
		}
		if !strings.Contains(out.String(), `ready\n`) {
			t.Fatalf("the call did not finish normally:\n%s", out)
		}
		assertNoHelper(t, h, out.String())
	})
}
