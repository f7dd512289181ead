package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/plugin"
)

// An extension's command that asks pi.shutdown ends RPC mode as the end of
// input does (session_shutdown, exit 0) while stdin is still open.
func TestRPCExtensionShutdown(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/run12")
	script := filepath.Join(dir, "s.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"unused"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(realPi(t), "--mode", "rpc", "--no-session", "--script", script, "-e", wasm, "--cwd", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := stdin.Write([]byte(`{"id":"1","type":"prompt","message":"/bye"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var lines []string
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("pi: %v\nstdout %s\nstderr %s", err, strings.Join(lines, "\n"), stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("pi did not end after /bye asked pi.shutdown (stdin open)\nstdout %s\nstderr %s", strings.Join(lines, "\n"), stderr.String())
	}
	out := strings.Join(lines, "\n")
	for _, want := range []string{`"command":"prompt","success":true`, `"type":"session_shutdown"`} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %s:\n%s\nstderr %s", want, out, stderr.String())
		}
	}
}
