package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
)

// piUI12 runs the real pi binary with the ABI 1.2 UI test guest, args and
// stdin; it returns stdout and stderr.
func piUI12(t *testing.T, stdin string, args ...string) (string, string) {
	t.Helper()
	return piUI12Script(t, `{"turns":[{"text":"the model answered"}]}`, stdin, args...)
}

// piUI12Script is piUI12 with the model's script.
func piUI12Script(t *testing.T, turns, stdin string, args ...string) (string, string) {
	t.Helper()
	wasm := plugin.BuildGo(t, ui12Guest)
	dir, home := t.TempDir(), t.TempDir()
	script := filepath.Join(dir, "s.json")
	os.WriteFile(script, []byte(turns), 0o644)
	cmd := exec.Command(realPi(t), append([]string{"--script", script, "-e", wasm, "--no-session"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PI_HOME="+filepath.Join(home, "pi"), "HOME="+home, "TERM=dumb")
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pi %s: %v\n%s\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

// TestLineModeExtensionUI12: the line mode prints statuses and widgets as
// "[NAME] TEXT", numbers a select's options, reads an input line and an
// editor's lines up to ".", answers components "no-tui", and never lets a
// control character a guest sent through.
func TestLineModeExtensionUI12(t *testing.T) {
	out, errOut := piUI12(t, "/show\n/clear\n/ask\n2\nada\nline one\nline two\n.\n/counter\n/ask\n\n/exit\n", "--interactive")
	for _, want := range []string{
		"[ui12] status" + escShown + "\n",
		"[ui12] widget one" + escShown + "\n[ui12] widget two\n",
		`shown; editor="" tui=false`,
		"? [ui12] Pick one]0;pwned[2J31mredX …\n  1. alpha]0;pwned[2J31mredX …\n  2. beta\n  3. gamma\n",
		"? [ui12] Your name (name): ",
		"? [ui12] Your story (lines; a line with only . ends)\n  was: once upon\n",
		`picked "beta", name "ada"/, story "line one\nline two"/`,
		"no component (no-tui)",
		"no answer: cancelled",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the line mode lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out+errOut, "\x1b\x07\u009b") {
		t.Errorf("a control character reached the terminal:\n%q", out)
	}
	if strings.Contains(out, "the model answered") {
		t.Errorf("a command reached the model:\n%s", out)
	}
}

// TestPrintModeExtensionUI12: without a person, dialogs answer "no-ui" at
// once, components "no-tui", and the rest {} (the editor's text "").
func TestPrintModeExtensionUI12(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"/show", `shown; editor="" tui=false` + "\n"},
		{"/ask", "no answer: no-ui\n"},
		{"/counter", "no component (no-tui)\n"},
	} {
		out, errOut := piUI12(t, "", "-p", tc.line)
		if out != tc.want {
			t.Errorf("-p %s printed %q, want %q (stderr %s)", tc.line, out, tc.want, errOut)
		}
	}
}

// TestLineModeExtensionRunsAndCustomMessages: a run a command asked for
// (agent.sendUserMessage) runs before the next line, which then is not
// refused as "already running"; a displayed custom message prints as
// "[customType] TEXT", control characters removed.
func TestLineModeExtensionRunsAndCustomMessages(t *testing.T) {
	out, errOut := piUI12Script(t, `{"turns":[{"text":"answer one"},{"text":"answer two"}]}`,
		"/later from the command\nsecond line\n/plain shown words\n/exit\n", "--interactive")
	for _, want := range []string{"answer one", "answer two", "[plain] shown words]0;pwned[2J31mredX\ny\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the line mode lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
	if strings.Index(out, "answer one") > strings.Index(out, "answer two") || strings.Contains(out+errOut, "already running") {
		t.Errorf("the extension's run and the next line overlapped:\n%s\n%s", out, errOut)
	}
	if strings.ContainsAny(out+errOut, "\x1b\x07\u009b") {
		t.Errorf("a control character reached the terminal:\n%q", out)
	}
}
