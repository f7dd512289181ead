package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

// ui12Guest is the ABI 1.2 UI test guest (extensions/testdata/guests/ui12):
// its texts carry an OSC title change, a CSI clear, a C1 CSI, BEL, CR and
// a newline, which must never reach the terminal.
const ui12Guest = "extensions/testdata/guests/ui12"

// escShown is what the guest's hostile suffix shows as once every control
// character is removed.
const escShown = "]0;pwned[2J31mredXy"

// startUI12 runs pi in tmux with the ui12 guest.
func startUI12(t *testing.T, name string, replies ...openai.Reply) (*tmuxPane, string) {
	return startUI12With(t, name, nil, "Enter sends", replies...)
}

// startUI12With runs pi in tmux with the ui12 guest and extra flags, and
// waits until the screen shows ready.
func startUI12With(t *testing.T, name string, flags []string, ready string, replies ...openai.Reply) (*tmuxPane, string) {
	return startUI12In(t, name, t.TempDir(), t.TempDir(), flags, ready, replies...)
}

// startUI12In is startUI12With in the project dir with the home home (a
// second pi on the same sessions).
func startUI12In(t *testing.T, name, dir, home string, flags []string, ready string, replies ...openai.Reply) (*tmuxPane, string) {
	wasm := plugin.BuildGo(t, ui12Guest)
	srv := openai.NewServer(t, replies...)
	p, stderrFile := startTmuxPi(t, name, dir, home, srv.URL, append([]string{"--model", "test-model", "-e", wasm}, flags...)...)
	p.waitFor(ready, "test-model")
	return p, stderrFile
}

// startTmuxPi runs the real pi with args in a 120×40 tmux pane of its own
// (socket pi-test-NAME-PID), in dir with the home home, talking to the
// OpenAI server at url; pi's stderr goes to the file it returns, and the
// pane stays after pi exits (PI-EXIT=CODE).
func startTmuxPi(t *testing.T, name, dir, home, url string, args ...string) (*tmuxPane, string) {
	t.Helper()
	tmux := tmuxPath(t)
	stderrFile := filepath.Join(home, "stderr.txt")
	p := &tmuxPane{t: t, tmux: tmux, socket: fmt.Sprintf("pi-test-%s-%d", name, os.Getpid())}
	t.Cleanup(func() { exec.Command(tmux, "-L", p.socket, "kill-server").Run() })
	var quoted string
	for _, a := range args {
		quoted += fmt.Sprintf(" %q", a)
	}
	script := fmt.Sprintf("cd %q && TERM=xterm-256color %q%s 2>%q; echo PI-EXIT=$?; exec cat", dir, realPi(t), quoted, stderrFile)
	p.run("new-session", "-d", "-s", "pi", "-x", "120", "-y", "40",
		"-e", "PI_HOME="+filepath.Join(home, "pi"), "-e", "HOME="+home,
		"-e", "OPENAI_BASE_URL="+url, "-e", "OPENAI_API_KEY=sk-test-0123456789abcdef",
		"-e", "NO_COLOR=", "-e", "PI_TUI=", "-e", "PI_CACHE_DIR="+os.Getenv("PI_CACHE_DIR"),
		"sh", "-c", script)
	return p, stderrFile
}

func (p *tmuxPane) typeLine(s string) {
	p.t.Helper()
	p.run("send-keys", "-t", "pi", "-l", s)
	p.run("send-keys", "-t", "pi", "Enter")
}

// TestTUIExtensionUI12InTmux drives ABI 1.2's UI in the real TUI: the
// shortcut warning, statuses, widgets, the title and the editor text with
// escape sequences in them, the three dialogs, an overlay component that
// takes keys and closes on Ctrl+C, a shortcut, and a hanging render that
// is closed while pi stays responsive.
func TestTUIExtensionUI12InTmux(t *testing.T) {
	p, stderrFile := startUI12(t, "ui12",
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "fancy", Arguments: `{"x":1}`}}},
		openai.Reply{Text: "after fancy"})
	p.waitFor("! warning: extension ui12: shortcut ctrl+c is not bound: pi binds it")

	p.typeLine("/show")
	s := p.waitFor("status"+escShown, "widget one"+escShown, "widget two", "> from the extension")
	if strings.Contains(s, "pwned\n") || strings.Contains(s, "\x1b") {
		t.Errorf("an escape sequence reached the screen:\n%s", s)
	}
	if title := strings.TrimSpace(p.run("display-message", "-p", "-t", "pi", "#{pane_title}")); title != "title"+escShown {
		t.Errorf("pane title %q, want %q", title, "title"+escShown)
	}
	p.run("send-keys", "-t", "pi", "C-u") // clear the editor text the guest set
	p.typeLine("/clear")
	p.waitFor("cleared")
	if s := p.screen(); strings.Contains(s, "status"+escShown) || strings.Contains(s, "widget two") {
		t.Errorf("the status or widget is still shown after the clear:\n%s", s)
	}

	// The three dialogs, titled [NAME] TITLE.
	p.typeLine("/ask")
	// A dialog's title and options are one line each: what follows a
	// line break is shown as " …".
	// The working message /show set replaces "working…" while a command
	// runs.
	p.waitFor("? [ui12] Pick one]0;pwned[2J31mredX …", "alpha]0;pwned[2J31mredX …", "gamma", "grinding"+escShown+" (Esc cancels)")
	p.run("send-keys", "-t", "pi", "Down")
	p.run("send-keys", "-t", "pi", "Enter")
	p.waitFor("? [ui12] Your name")
	p.typeLine("ada")
	p.waitFor("? [ui12] Your story", "once upon", "Alt+Enter new line")
	p.run("send-keys", "-t", "pi", "-l", " a time")
	p.run("send-keys", "-t", "pi", "Enter")
	p.waitFor(`picked "beta", name "ada"/, story "once upon a time"/`)

	// An overlay: keys go to it, Ctrl+C closes it.
	p.typeLine("/counter")
	p.waitFor("Counter"+escShown, "count=0 width=120", "[ui12] Ctrl+C closes")
	p.run("send-keys", "-t", "pi", "Up")
	p.run("send-keys", "-t", "pi", "Up")
	p.waitFor("count=2 width=120")
	p.run("send-keys", "-t", "pi", "C-c")
	p.waitFor("> ")
	if s := p.screen(); strings.Contains(s, "count=2") || strings.Contains(s, "Ctrl+C closes") {
		t.Errorf("the overlay is still shown after Ctrl+C:\n%s", s)
	}
	p.typeLine("/state")
	p.waitFor("key:up;key:up;dispose:cancelled")

	// The API key never shows, even split over two spans.
	p.typeLine("/say plain words here")
	p.waitFor("said plain words here")
	p.typeLine("/say key sk-test-0123456789abcdef zzz")
	s = p.waitFor("said key [REDACTED] zzz")
	if strings.Count(s, "0123456789abcdef") > 0 {
		t.Errorf("the key is on the screen:\n%s", s)
	}

	// A shortcut.
	p.run("send-keys", "-t", "pi", "F5")
	p.waitFor("pressed 1")

	// Components in the header, footer, widget and editor slots; the
	// editor component sees each key first.
	p.typeLine("/slots")
	p.waitFor("HEADER line"+escShown, "FOOTER line"+escShown, "WIDGET comp"+escShown, "EDITOR[] cursor=0")
	p.run("send-keys", "-t", "pi", "-l", "ab!c")
	p.waitFor("EDITOR[abc] cursor=3")
	p.run("send-keys", "-t", "pi", "C-x")
	p.waitFor("> abc")
	if s := p.screen(); strings.Contains(s, "EDITOR[") {
		t.Errorf("the editor component is still shown after it closed:\n%s", s)
	}
	p.run("send-keys", "-t", "pi", "C-u")

	// A tool the extension draws: pi's first line, then the guest's lines.
	p.typeLine("use fancy")
	s = p.waitFor("after fancy", "FANCY RESULT fancy done", "  second"+escShown)
	if !strings.Contains(s, "✓ fancy {\"x\":1}\n  FANCY RESULT fancy done") {
		t.Errorf("the tool call is not drawn as pi's line then the guest's:\n%s", s)
	}

	// A render that never returns: closed after the 5 s hook limit, with
	// a line saying so; pi answers meanwhile and after.
	p.typeLine("/hang")
	p.waitFor("opened c")
	p.waitFor("pi.ext.ui12: component closed: its instance ended: component=c2", "timed out after 5s")
	p.typeLine("/state")
	p.waitFor("> ")

	p.run("send-keys", "-t", "pi", "C-d")
	p.waitFor("PI-EXIT=0")
	data, err := os.ReadFile(stderrFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "pwned") {
		t.Fatalf("stderr got a guest's text while the TUI ran:\n%s", data)
	}
}

// TestTUIExtensionHeaderAtStart: a header component an extension opens in
// session_start, before the TUI runs, shows when it starts, in place of
// pi's header line.
func TestTUIExtensionHeaderAtStart(t *testing.T) {
	p, _ := startUI12With(t, "ui12h", []string{"--ext-config", "header=true"}, "ARCADE HEADER"+escShown+" #1")
	if s := p.screen(); strings.Contains(s, "Enter sends · Alt+Enter") {
		t.Errorf("pi's header line shows beside the extension's:\n%s", s)
	}
	// A session change: the header opened in its session_start replaces
	// the old one, which is disposed as "replaced".
	p.typeLine("/new")
	s := p.waitFor("ARCADE HEADER" + escShown + " #2")
	if strings.Contains(s, "HEADER"+escShown+" #1") {
		t.Errorf("the old header still shows:\n%s", s)
	}
	p.typeLine("/state")
	p.waitFor("header 1:replaced")
	p.run("send-keys", "-t", "pi", "C-d")
	p.waitFor("PI-EXIT=0")
}
