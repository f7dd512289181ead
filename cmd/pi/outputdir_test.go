package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
)

// realPi is the real pi binary, built once per test binary.
func realPi(t *testing.T) string { return plugin.Pi(t) }

// fullOutputPathOf returns the fullOutputPath in an event line's result or
// partial result, if any.
func fullOutputPathOf(line []byte) string {
	type withDetails struct {
		Details struct {
			FullOutputPath string `json:"fullOutputPath"`
		} `json:"details"`
	}
	var ev struct {
		Result        *withDetails `json:"result"`
		PartialResult *withDetails `json:"partialResult"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return ""
	}
	for _, r := range []*withDetails{ev.Result, ev.PartialResult} {
		if r != nil && r.Details.FullOutputPath != "" {
			return r.Details.FullOutputPath
		}
	}
	return ""
}

// The real pi process keeps bash's full-output files in a private 0700
// folder under $TMPDIR and removes it when it exits: normally, on Ctrl-C
// (SIGINT) and on SIGTERM.
func TestFullOutputFolderRemovedOnExit(t *testing.T) {
	bin := realPi(t)
	tests := []struct {
		name     string
		command  string
		signal   syscall.Signal // 0: let it finish
		wantCode int
	}{
		{"normal exit", "seq 1 3000", 0, 0},
		{"SIGINT", "seq 1 3000; sleep 600", syscall.SIGINT, 130},
		{"SIGTERM", "seq 1 3000; sleep 600", syscall.SIGTERM, 130},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp, home, work := t.TempDir(), t.TempDir(), t.TempDir()
			script := filepath.Join(work, "s.json")
			os.WriteFile(script, []byte(`{"turns":[{"toolCalls":[{"name":"bash","arguments":{"command":`+mustJSON(tt.command)+`}}]},{"text":"done"}]}`), 0o644)
			cmd := exec.Command(bin, "--mode", "json", "-p", "go", "--script", script, "--cwd", work)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "PI_HOME="+home, "OPENAI_API_KEY=", "PI_TRUST=")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			// Wait for an event that names the file: the folder exists then.
			lines := bufio.NewScanner(stdout)
			lines.Buffer(make([]byte, 1<<20), 16<<20)
			path := ""
			for path == "" && lines.Scan() {
				path = fullOutputPathOf(lines.Bytes())
			}
			if path == "" {
				t.Fatalf("no event named a full-output file; stderr:\n%s", stderr.String())
			}
			dir := filepath.Dir(path)
			if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), "pi-") {
				t.Fatalf("full output %s is not in a pi-* folder of TMPDIR %s", path, tmp)
			}
			if tt.signal != 0 {
				fi, err := os.Stat(dir)
				if err != nil || fi.Mode().Perm() != 0o700 {
					t.Fatalf("folder %s while pi runs: %v, %v; want mode 0700", dir, fi, err)
				}
				if err := cmd.Process.Signal(tt.signal); err != nil {
					t.Fatal(err)
				}
			}
			for lines.Scan() {
			}
			err = cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("full-output folder %s still there after pi exited (%v)", dir, err)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "pi-*")); len(left) != 0 {
				t.Fatalf("left in TMPDIR: %v", left)
			}
		})
	}
}

// pi tool call prints its result with the key redacted, and its bash does
// not get the key's variable unless pass_env lists it; its folder is gone
// when it returns.
func TestToolCallRedactsAndHides(t *testing.T) {
	home := isolate(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	const key = "sk-tool-call-KEY-0123456789"
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("KEY_COPY", key)
	cmd := `{"command":"seq 1 3000"}`
	var stdout, stderr bytes.Buffer
	if code := run([]string{"tool", "call", "bash", cmd, "--cwd", t.TempDir()}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var res struct {
		Content []struct{ Text string }
		Details struct {
			FullOutputPath string `json:"fullOutputPath"`
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.Details.FullOutputPath == "" {
		t.Fatalf("result %s: %v", stdout.String(), err)
	}
	if _, err := os.Stat(filepath.Dir(res.Details.FullOutputPath)); !os.IsNotExist(err) {
		t.Fatalf("folder still there after pi tool call: %v", err)
	}
	stdout.Reset()
	os.WriteFile(filepath.Join(home, "pi.toml"), []byte("[tools.bash]\npass_env = [\"OPENAI_API_KEY\"]\n"), 0o644)
	cmd = `{"command":"echo open=[${OPENAI_API_KEY-unset}] copy=[${KEY_COPY-unset}]"}`
	if code := run([]string{"tool", "call", "bash", cmd, "--cwd", t.TempDir()}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), `open=[[REDACTED]] copy=[unset]`) || strings.Contains(stdout.String(), key) {
		t.Fatalf("pass_env result: %s", stdout.String())
	}
	os.Remove(filepath.Join(home, "pi.toml"))
	stdout.Reset()
	if code := run([]string{"tool", "call", "bash", cmd, "--cwd", t.TempDir()}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), `open=[unset] copy=[unset]`) {
		t.Fatalf("result without pass_env: %s", stdout.String())
	}
}
