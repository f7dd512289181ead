//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/mcpserver"
)

// waitForFile waits until the file exists and returns its contents.
func waitForFile(t *testing.T, path string, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if b, err := os.ReadFile(path); err == nil {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %v", path, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processGone waits until pid is gone or a zombie.
func processGone(t *testing.T, what string, pid int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X') {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs after pi exited", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMCPCallEndsPromptlyOnCtrlC runs the real pi binary calling a slow MCP
// tool, sends it SIGINT (Ctrl-C) while the server works on the call, and
// checks that pi answers at once with a cancelled result, that the server
// was told (notifications/cancelled reached its handler), and that the
// server and the child it started are gone when pi has exited.
func TestMCPCallEndsPromptlyOnCtrlC(t *testing.T) {
	pi := realPi(t)
	server := mcpserver.Server(t)
	home, markers := t.TempDir(), t.TempDir()
	piHome := filepath.Join(home, ".pi")
	os.MkdirAll(piHome, 0o755)
	toml := fmt.Sprintf("[[mcp]]\nname = \"t\"\ncommand = [%q]\nenv = { MCPTEST_MARKER_DIR = %q }\n", server, markers)
	if err := os.WriteFile(filepath.Join(piHome, "pi.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PI_HOME="+piHome, "HOME="+home, "OPENAI_API_KEY=", "PI_TRUST=")

	// Warm the cache and start a child in the server's group first, with a
	// server of its own: every server pi starts must be gone after it exits.
	spawn := exec.Command(pi, "tool", "call", "mcp__t__spawn", "{}")
	spawn.Env, spawn.Dir = env, home
	out, err := spawn.CombinedOutput()
	if err != nil {
		t.Fatalf("spawn: %v\n%s", err, out)
	}
	var res struct {
		Content []struct{ Text string }
		IsError bool
	}
	if err := json.Unmarshal(out, &res); err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("spawn result %s: %v", out, err)
	}
	child, _ := strconv.Atoi(res.Content[0].Text)
	processGone(t, "the child of a server of an ended pi", child, 10*time.Second)
	os.Remove(filepath.Join(markers, "server-pid"))

	cmd := exec.Command(pi, "tool", "call", "mcp__t__slow", `{"ms":600000,"id":"ctrlc"}`)
	cmd.Env, cmd.Dir = env, home
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	waitForFile(t, filepath.Join(markers, "started-ctrlc"), 30*time.Second)
	serverPid, _ := strconv.Atoi(strings.TrimSpace(waitForFile(t, filepath.Join(markers, "server-pid"), time.Second)))
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		// The cancelled call's result is an error: exit status 1.
		if code := cmd.ProcessState.ExitCode(); code != exitError {
			t.Errorf("pi exited with %v, want status %d\n%s", err, exitError, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("pi did not exit within 5s of Ctrl-C\nstderr: %s", stderr.String())
	}
	took := time.Since(start)
	t.Logf("pi exited %v after Ctrl-C", took)
	if took > 3*time.Second {
		t.Errorf("pi took %v to end after Ctrl-C", took)
	}
	if !strings.Contains(stdout.String(), `"isError":true`) || !strings.Contains(stdout.String(), "cancelled") {
		t.Errorf("result = %s", stdout.String())
	}
	// notifications/cancelled reached the server before it was ended.
	if _, err := os.Stat(filepath.Join(markers, "cancelled-ctrlc")); err != nil {
		t.Errorf("the server's handler was not cancelled: %v", err)
	}
	processGone(t, "the MCP server", serverPid, 5*time.Second)
}
