package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
)

// rawProjectDir makes a project whose pi.toml loads the ABI 1.1 test guest
// (written without the SDK) with config, and a script for the model.
func rawProjectDir(t *testing.T, config, script string) (dir, scriptFile string) {
	t.Helper()
	isolate(t)
	dir = t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/raw11")
	sum := sha256File(t, wasm)
	toml := fmt.Sprintf("[[extensions]]\nname = \"raw11\"\npath = %q\nsha256 = %q\n[extensions.config]\nname = \"raw11\"\n%s\n", wasm, sum, config)
	os.WriteFile(filepath.Join(dir, "pi.toml"), []byte(toml), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("file-content-xyz"), 0o644)
	scriptFile = filepath.Join(dir, "s.json")
	os.WriteFile(scriptFile, []byte(script), 0o644)
	return dir, scriptFile
}

// TestSlashCommandsInPrintMode: -p "/NAME ARGS" runs the command and
// prints its text (exit 0, no model); an unknown /x goes to the model.
func TestSlashCommandsInPrintMode(t *testing.T) {
	dir, script := rawProjectDir(t, "", `{"turns":[{"text":"the model answered"}]}`)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-p", "/raw  hi there", "--trust", "--script", script, "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if stdout.String() != "raw: hi there\n" {
		t.Errorf("-p /raw printed %q", stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"-p", "/help", "--trust", "--script", script, "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "/raw ARGS") || !strings.Contains(stdout.String(), "/help") {
		t.Errorf("-p /help: exit %d, %q", code, stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"-p", "/nope x", "--trust", "--script", script, "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "the model answered") {
		t.Errorf("-p /nope: exit %d, %q", code, stdout.String())
	}
	// --mode json: the command's text is one JSON line (between the
	// session's header and events), and nothing reaches the model.
	stdout.Reset()
	if code := run([]string{"--mode", "json", "-p", "/raw x", "--trust", "--script", script, "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 || !slices.Contains(strings.Split(stdout.String(), "\n"), `{"text":"raw: x","type":"notice"}`) || strings.Contains(stdout.String(), "the model answered") {
		t.Errorf("json /raw: exit %d, %q", code, stdout.String())
	}
}

// TestSlashCommandsInteractive: a line /NAME runs the command, an unknown
// /x is answered, /exit ends.
func TestSlashCommandsInteractive(t *testing.T) {
	dir, script := rawProjectDir(t, "", `{"turns":[{"text":"the model answered"}]}`)
	var stdout, stderr bytes.Buffer
	code := run([]string{"--interactive", "--trust", "--script", script, "--cwd", dir}, strings.NewReader("/raw one\n/nope\n/help\n/exit\nnever sent\n"), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"raw: one\n", "unknown command /nope (see /help)\n", "/raw ARGS", "echo the arguments (extension raw11)"} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "the model answered") {
		t.Errorf("a command or /exit reached the model:\n%s", out)
	}
}

// TestAskModes: an extension's ask blocks the call in -p without --yes,
// runs it with --yes, and asks the person in interactive mode.
func TestAskModes(t *testing.T) {
	const script = `{"turns":[{"toolCalls":[{"name":"read","arguments":{"path":"notes.txt"}}]},{"text":"done"}]}`
	dir, sc := rawProjectDir(t, `ask = "read"`, script)
	run1 := func(args []string, stdin string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := run(append(args, "--trust", "--script", sc, "--cwd", dir), strings.NewReader(stdin), &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	out, _, code := run1([]string{"--mode", "json", "-p", "list"}, "")
	if code != 0 || !strings.Contains(out, `needs approval: may read run? (run interactively, or pass --yes)`) || strings.Contains(out, "file-content-xyz") {
		t.Errorf("-p without --yes: exit %d\n%s", code, out)
	}
	out, _, code = run1([]string{"--mode", "json", "-p", "list", "--yes"}, "")
	if code != 0 || !strings.Contains(out, "file-content-xyz") || strings.Contains(out, "needs approval") {
		t.Errorf("-p --yes: exit %d\n%s", code, out)
	}
	out, _, code = run1([]string{"--interactive"}, "list\ny\n")
	if code != 0 || !strings.Contains(out, "may read run?\n  allow? [y]es / [N]o / [a]lways") || !strings.Contains(out, "file-content-xyz") {
		t.Errorf("interactive, answered y: exit %d\n%s", code, out)
	}
	dir, sc = rawProjectDir(t, `ask = "read"`, script)
	out, _, code = run1([]string{"--interactive"}, "list\n\n")
	if code != 0 || !strings.Contains(out, "may read run?\n  allow? [y]es / [N]o / [a]lways") || !strings.Contains(out, "the user did not approve it (may read run?)") || strings.Contains(out, "file-content-xyz") {
		t.Errorf("interactive, answered Enter: exit %d\n%s", code, out)
	}
}

// TestInputHookInPrintMode: a handled prompt prints the message (exit 0);
// a failing input hook exits 1 with the error on stderr.
func TestInputHookInPrintMode(t *testing.T) {
	dir, script := rawProjectDir(t, `inputSecret = "sk-"`, `{"turns":[{"text":"the model answered"}]}`)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-p", "use sk-123", "--trust", "--script", script, "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 || stdout.String() != "refused: the prompt holds a secret\n" {
		t.Errorf("handled: exit %d, %q", code, stdout.String())
	}
	dir, script = rawProjectDir(t, `inputCrash = true`, `{"turns":[{"text":"the model answered"}]}`)
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"-p", "hello", "--trust", "--script", script, "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 1 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "the prompt was not sent") {
		t.Errorf("failing hook: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// TestExtInstallListTrust11: --grant http= and tool= reach pi.toml; ext
// list shows them and the commands; pi trust lists them.
func TestExtInstallListTrust11(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/raw11")
	var stdout, stderr bytes.Buffer
	code := run([]string{"ext", "install", wasm, "--cwd", dir, "--grant", "http=https://api.example.com/v1/*", "--grant", "tool=read", "--grant", "tool=grep"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("install: exit %d: %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "grants: http=https://api.example.com/v1/* tool=read tool=grep") || !strings.Contains(out, "commands: /raw, /probe") {
		t.Errorf("install said:\n%s", out)
	}
	toml, _ := os.ReadFile(filepath.Join(dir, "pi.toml"))
	if !strings.Contains(string(toml), "http = [\"https://api.example.com/v1/*\"]\ntools = [\"read\", \"grep\"]\n") {
		t.Errorf("pi.toml:\n%s", toml)
	}
	stdout.Reset()
	if code := run([]string{"ext", "list", "--json", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("list: exit %d: %s", code, stderr.String())
	}
	var entries []struct {
		Name     string
		Commands []string
		Grants   struct{ HTTP, Tools []string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &entries); err != nil || len(entries) != 1 {
		t.Fatalf("list --json: %v\n%s", err, stdout.String())
	}
	if e := entries[0]; e.Name != "raw11" || strings.Join(e.Commands, ",") != "raw,probe" || strings.Join(e.Grants.HTTP, ",") != "https://api.example.com/v1/*" || strings.Join(e.Grants.Tools, ",") != "read,grep" {
		t.Errorf("list --json: %+v", e)
	}
	stdout.Reset()
	run([]string{"ext", "list", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr)
	if !strings.Contains(stdout.String(), "/raw,/probe") || !strings.Contains(stdout.String(), "http=https://api.example.com/v1/* tool=read tool=grep") {
		t.Errorf("list:\n%s", stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"trust", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "extension raw11: may fetch https://api.example.com/v1/*") || !strings.Contains(stdout.String(), "extension raw11: may call the tools read, grep") {
		t.Errorf("trust: exit %d\n%s", code, stdout.String())
	}
	// A bad pattern is refused before anything is written.
	stderr.Reset()
	if code := run([]string{"ext", "install", wasm, "--cwd", t.TempDir(), "--grant", "http=https://x/*/y"}, strings.NewReader(""), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "a * may only stand at the end") {
		t.Errorf("bad http grant: exit %d, %s", code, stderr.String())
	}
}
