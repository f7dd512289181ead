package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
)

// Extensions' flags (ABI 1.2) are parsed after the extensions load, as
// --NAME, --NAME=VALUE and --NAME VALUE, before or after the prompt; an
// undeclared one stays a usage error (exit 2) with the closest flag; a
// string flag takes the word after it, a boolean one does not.
func TestExtensionFlags(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/run12")
	script := filepath.Join(dir, "s.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"toolCalls":[{"name":"flags","arguments":{}}]},{"text":"done"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"-e", wasm, "--cwd", dir, "--script", script, "--mode", "json", "-p"}
	for _, tc := range []struct {
		args        []string
		flags, user string
	}{
		{[]string{"hello"}, `{\"greeting\":\"hi\",\"loud\":false,\"who\":null}`, "hello"},
		{[]string{"--loud", "hello", "--who", "world"}, `{\"greeting\":\"hi\",\"loud\":true,\"who\":\"world\"}`, "hello"},
		{[]string{"--loud=false", "--greeting=hey", "hello"}, `{\"greeting\":\"hey\",\"loud\":false,\"who\":null}`, "hello"},
		{[]string{"--who", "you", "--loud", "two words"}, `{\"greeting\":\"hi\",\"loud\":true,\"who\":\"you\"}`, "two words"},
	} {
		r := runCLI(t, "", append(append([]string(nil), base...), tc.args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, `"text":"`+tc.flags+`"`) || !strings.Contains(r.stdout, `"role":"user","content":[{"type":"text","text":"`+tc.user+`"}]`) {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %s", tc.args, r.code, r.stdout, r.stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lod", "hello"}, "pi: unknown flag --lod; did you mean --loud?"},
		{[]string{"hello", "--who"}, "pi: flag needs an argument: --who"},
		{[]string{"--loud=maybe", "hello"}, `pi: flag --loud takes true or false, got "maybe"`},
		{[]string{"-x", "hello"}, "pi: unknown flag -x"},
	} {
		r := runCLI(t, "", append(append([]string(nil), base...), tc.args...)...)
		r.check(t, exitUsage, "", tc.want)
	}
}

// pi tool call loads extensions too, so it takes their flags.
func TestExtensionFlagsToolCall(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/run12")
	r := runCLI(t, "", "tool", "call", "--who", "you", "flags", "{}", "-e", wasm, "--cwd", dir, "--loud")
	r.check(t, 0, `{\"greeting\":\"hi\",\"loud\":true,\"who\":\"you\"}`, "")
	r = runCLI(t, "", "tool", "call", "flags", "{}", "-e", wasm, "--cwd", dir, "--lou")
	r.check(t, exitUsage, "", "pi tool call: unknown flag --lou; did you mean --loud?")
}

// --help lists the loaded extensions' flags in their own section; an
// extension that does not load is one line, and help still exits 0.
func TestExtensionFlagsHelp(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/run12")
	// Help waits only for extensions that load cheaply: one run compiles
	// the module into the cache first.
	runCLI(t, "", "tool", "call", "flags", "{}", "-e", wasm, "--cwd", dir).check(t, 0, "greeting", "")
	for _, args := range [][]string{
		{"-e", wasm, "--cwd", dir, "--help"},
		{"tool", "call", "-e", wasm, "--cwd", dir, "--help"},
	} {
		r := runCLI(t, "", args...)
		_, ext, _ := strings.Cut(r.stdout, "\nExtension flags:\n")
		if r.code != 0 || !strings.Contains(ext, "--greeting VALUE  [run12]  what to say (default \"hi\")") ||
			!strings.Contains(ext, "--loud            [run12]  say it loudly") || !strings.Contains(ext, "--who VALUE       [run12]  whom to greet") {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %s", args, r.code, r.stdout, r.stderr)
		}
	}
	// Without extensions, no section.
	if r := runCLI(t, "", "--cwd", dir, "--help"); r.code != 0 || strings.Contains(r.stdout, "Extension flags") {
		t.Errorf("no extension: exit %d\n%s", r.code, r.stdout)
	}
	// A broken extension: one line, exit 0.
	bad := filepath.Join(dir, "bad.wasm")
	if err := os.WriteFile(bad, []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "-e", bad, "--cwd", dir, "--help")
	_, ext, _ := strings.Cut(r.stdout, "\nExtension flags: not listed: ")
	if r.code != 0 || ext == "" || strings.Count(ext, "\n") != 1 || !strings.Contains(ext, "bad.wasm") {
		t.Errorf("broken extension: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}
