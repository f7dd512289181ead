package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
)

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
