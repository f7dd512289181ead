package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

// TestExtensionCommandWithoutModel: a slash command of an extension runs
// in print mode with no model configured (the conversation resolves the
// model only when a prompt goes to it); a plain prompt then fails with the
// no-model error, once.
func TestExtensionCommandWithoutModel(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	wasm := plugin.BuildGo(t, "examples/plugins/todo")
	r := runCLI(t, "", "-e", wasm, "--cwd", dir, "-p", "/todo write the README")
	if r.code != 0 || !strings.Contains(r.stdout, "[ ] 1. write the README") {
		t.Fatalf("/todo without a model: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", "-e", wasm, "--cwd", dir, "-p", "hello")
	if r.code != exitError || strings.Count(r.stderr, "no model configured") != 1 {
		t.Fatalf("a prompt without a model: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestDevNullIsNoTerminal: /dev/null is a character device but no
// terminal. pi -r with it as stdin lists the sessions on stderr and exits 2
// (as with a pipe) instead of waiting for a pick; plain pi with it is print
// mode without a prompt, a usage error.
func TestDevNullIsNoTerminal(t *testing.T) {
	bin := realPi(t)
	home, dir := t.TempDir(), t.TempDir()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	run := func(args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Stdin = null
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Env = append(os.Environ(), "PI_HOME="+home, "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "PI_TRUST=", "PI_CODING_AGENT_SESSION_DIR=")
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stderr.String()
	}
	// One session to list.
	script := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(script, []byte(`{"turns":[{"text":"hi"}]}`), 0o644)
	if code, stderr := run("--script", script, "-p", "remember me"); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	code, stderr := run("-r", "-p", "again")
	if code != exitUsage || !strings.Contains(stderr, "remember me") || !strings.Contains(stderr, "-r picks a session on a terminal") {
		t.Fatalf("pi -r </dev/null: exit %d, stderr %q", code, stderr)
	}
	if code, stderr := run(); code != exitUsage || !strings.Contains(stderr, "no prompt") {
		t.Fatalf("pi </dev/null: exit %d, stderr %q", code, stderr)
	}
}

// TestLineModeHasTheCommands: the line mode has what the TUI has — pi's
// slash commands, !COMMAND into the conversation, @PATH attachments — since
// they are the conversation's, not a front end's.
func TestLineModeHasTheCommands(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the notes\n"), 0o644)
	srv := openai.NewServer(t, openai.Reply{Text: "seen both"})
	in := strings.NewReader("/tools\n!echo from-the-shell\n@notes.txt what do they say?\n/session\n/new\n/exit\nnot sent\n")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--interactive", "--base-url", srv.URL, "--model", "m", "--cwd", dir}, in, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"Tools (--tools or [tools] active", // /tools
		"from-the-shell",                   // !cmd's output
		"seen both",                        // the answer
		"1 user message, 1 answer",         // /session, after the prompt (the bash message is no user message)
		"✓ new session",                    // /new
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1 (/exit ends before the last line)", len(reqs))
	}
	got := requestText(reqs[0])
	if !strings.Contains(got, "Ran `echo from-the-shell`") || !strings.Contains(got, "the notes") || !strings.Contains(got, "what do they say?") {
		t.Errorf("the request lacks the shell command or the attachment:\n%s", got)
	}
}
