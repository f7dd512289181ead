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
