package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
)

// TestPrintFinishesExtensionRuns: -p and --mode json wait for the runs an
// extension started during the prompt (ABI 1.2): a command that sends a
// user message prints the model's answer to it before pi exits; with
// --no-session the extension's session entries live in memory.
func TestPrintFinishesExtensionRuns(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/conv12/a")
	toml := fmt.Sprintf("[[extensions]]\nname = \"conv12\"\npath = %q\nsha256 = %q\n", wasm, sha256File(t, wasm))
	os.WriteFile(filepath.Join(dir, "pi.toml"), []byte(toml), 0o644)
	script := filepath.Join(dir, "s.json")
	os.WriteFile(script, []byte(`{"turns":[{"text":"answer to the extension"}]}`), 0o644)

	var stdout, stderr bytes.Buffer
	if code := run([]string{"-p", "/conv12-typed send asked by the extension", "--trust", "--script", script, "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "answer to the extension") {
		t.Errorf("-p did not finish the extension's run: %q", stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"--mode", "json", "-p", "/conv12-typed send asked by the extension", "--trust", "--script", script, "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("json: exit %d: %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, `"type":"agent_end"`) || !strings.Contains(out, "answer to the extension") {
		t.Errorf("--mode json did not finish the extension's run:\n%s", out)
	}
	stdout.Reset()
	if code := run([]string{"--no-session", "-p", "/conv12-typed append kept", "--trust", "--script", script, "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 || len(strings.TrimSpace(stdout.String())) != 10 {
		t.Errorf("--no-session session.append: exit %d, %q %s", code, stdout.String(), stderr.String())
	}
}

// TestReferenceReadsSession12Entries: what ABI 1.2 writes into a session
// file — an extension's custom_message, a compaction whose summary a hook
// gave — is read back by the reference agent's own SessionManager into
// the context it sends the model.
func TestReferenceReadsSession12Entries(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	a := plugin.BuildGo(t, "extensions/testdata/guests/conv12/a")
	b := plugin.BuildGo(t, "extensions/testdata/guests/conv12/b")
	toml := fmt.Sprintf("[[extensions]]\nname = \"conv12\"\npath = %q\nsha256 = %q\n", a, sha256File(t, a)) +
		fmt.Sprintf("[[extensions]]\nname = \"conv12b\"\npath = %q\nsha256 = %q\n[extensions.config]\ncompactSummary = \"summary by hook\"\n", b, sha256File(t, b))
	os.WriteFile(filepath.Join(dir, "pi.toml"), []byte(toml), 0o644)
	script := filepath.Join(dir, "s.json")
	os.WriteFile(script, []byte(`{"turns":[{"text":"one"}]}`), 0o644)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	for _, p := range []string{"hello", "/conv12-typed sendmsg remember this", "/compact"} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"-p", p, "--session", file, "--trust", "--script", script, "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", p, code, stderr.String())
		}
	}
	var ref refTree
	if err := json.Unmarshal([]byte(refSession(t, "dump", file)), &ref); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ref.Context {
		got = append(got, m.Role+": "+m.Text)
	}
	joined := strings.Join(got, "\n")
	if !strings.Contains(joined, "summary by hook") || !strings.Contains(joined, "user: remember this") || !strings.Contains(joined, "user: hello") {
		t.Errorf("the reference's context:\n%s", joined)
	}
}
