package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

// tmuxPath finds tmux, installing it with apt-get when it is missing and
// that is possible; it skips the test only when tmux cannot be had.
func tmuxPath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("tmux"); err == nil {
		return p
	}
	if _, err := exec.LookPath("apt-get"); err == nil && os.Geteuid() == 0 {
		if out, err := exec.Command("apt-get", "install", "-y", "-q", "tmux").CombinedOutput(); err != nil {
			t.Logf("apt-get install tmux: %v\n%s", err, out)
		}
		if p, err := exec.LookPath("tmux"); err == nil {
			return p
		}
	}
	t.Skip("tmux is not installed and could not be installed (apt-get install tmux); the end-to-end TUI test needs a real terminal")
	return ""
}

// tmuxPane is a pi running in a detached tmux session on a private server.
type tmuxPane struct {
	t      *testing.T
	tmux   string
	socket string
}

func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (p *tmuxPane) screen() string { return p.run("capture-pane", "-p", "-t", "pi") }

// waitFor polls the screen until it shows every want, for at most 30s.
func (p *tmuxPane) waitFor(want ...string) string {
	p.t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		s := p.screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return s
		}
		select {
		case <-tick.C:
		case <-deadline:
			p.t.Fatalf("the terminal did not show %q within 30s; it shows:\n%s", want, s)
		}
	}
}

// TestTUIInTmux runs the real pi binary in a tmux terminal against the
// loopback OpenAI server: it types a prompt, sees the answer rendered as
// markdown, a tool call and the status line, and exits with Ctrl-D.
func TestTUIInTmux(t *testing.T) {
	tmux := tmuxPath(t)
	bin := realPi(t)
	args, _ := json.Marshal(map[string]string{"command": "echo tool-ran-here"})
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: string(args)}}},
		openai.Reply{Text: "Hello from **the model**:\n\n- first point\n- second point\n", Chunks: 4,
			Usage: &openai.Usage{PromptTokens: 1200, CompletionTokens: 34, TotalTokens: 1234}},
	)
	dir, home := t.TempDir(), t.TempDir()
	p := &tmuxPane{t: t, tmux: tmux, socket: fmt.Sprintf("pi-test-%d", os.Getpid())}
	t.Cleanup(func() { exec.Command(tmux, "-L", p.socket, "kill-server").Run() })
	script := fmt.Sprintf("cd %q && TERM=xterm-256color %q --model test-model; echo PI-EXIT=$?; exec cat", dir, bin)
	p.run("new-session", "-d", "-s", "pi", "-x", "100", "-y", "30",
		"-e", "PI_HOME="+filepath.Join(home, "pi"), "-e", "HOME="+home,
		"-e", "OPENAI_BASE_URL="+srv.URL, "-e", "OPENAI_API_KEY=sk-test-0123456789abcdef",
		"-e", "NO_COLOR=", "-e", "PI_TUI=",
		"sh", "-c", script)
	p.waitFor("Enter sends", "test-model")
	p.run("send-keys", "-t", "pi", "-l", "say hello")
	p.run("send-keys", "-t", "pi", "Enter")
	s := p.waitFor("• second point", "ctx 1.2k/128k (1.0%)")
	// The footer: the folder, the session's tokens, the context's share
	// of the window, the model.
	for _, want := range []string{"› say hello", "✓ bash $ echo tool-ran-here", "tool-ran-here", "Hello from the model", "• first point",
		filepath.Base(dir), "↑1.2k ↓34 · ctx 1.2k/128k (1.0%)", "test-model"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "**the model**") {
		t.Errorf("markdown shown raw:\n%s", s)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	msgs, _ := reqs[0]["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "user" || !strings.Contains(fmt.Sprint(last["content"]), "say hello") {
		t.Fatalf("first request ends with %v", last)
	}
	// Up recalls the prompt; Ctrl-C clears it; Ctrl-D at an empty prompt exits.
	p.run("send-keys", "-t", "pi", "Up")
	p.waitFor("> say hello")
	p.run("send-keys", "-t", "pi", "C-c")
	// A second line (Alt+Enter) grows the editor; the first stays shown.
	p.run("send-keys", "-t", "pi", "-l", "line one")
	p.run("send-keys", "-t", "pi", "M-Enter")
	p.run("send-keys", "-t", "pi", "-l", "line two")
	p.waitFor("> line one\n> line two")
	p.run("send-keys", "-t", "pi", "C-c")
	// "/" opens the dropdown of commands.
	p.run("send-keys", "-t", "pi", "-l", "/re")
	p.waitFor("▸ /resume [ID]")
	p.run("send-keys", "-t", "pi", "C-c")
	p.run("send-keys", "-t", "pi", "C-d")
	p.waitFor("PI-EXIT=0")
	if data, err := os.ReadFile(filepath.Join(home, "pi", "prompt-history.jsonl")); err != nil || !strings.Contains(string(data), `"say hello"`) {
		t.Fatalf("history file: %q, %v", data, err)
	}
}

// TestTUINotForPipesOrDumbTerminals: the line mode runs when stdin is not a
// terminal, TERM is dumb or PI_TUI=0 (NO_COLOR keeps the TUI, without
// colours: TestNoColor in the tui package).
func TestTUINotForPipesOrDumbTerminals(t *testing.T) {
	tmux := tmuxPath(t)
	bin := realPi(t)
	srv := openai.NewServer(t, openai.Reply{Text: "plain answer"}, openai.Reply{Text: "plain answer"})
	for i, env := range [][]string{{"TERM=dumb"}, {"TERM=xterm-256color", "PI_TUI=0"}} {
		home := t.TempDir()
		p := &tmuxPane{t: t, tmux: tmux, socket: fmt.Sprintf("pi-test-%d-%d", os.Getpid(), i)}
		t.Cleanup(func() { exec.Command(tmux, "-L", p.socket, "kill-server").Run() })
		args := []string{"new-session", "-d", "-s", "pi", "-x", "100", "-y", "20",
			"-e", "PI_HOME=" + home, "-e", "HOME=" + home,
			"-e", "OPENAI_BASE_URL=" + srv.URL, "-e", "OPENAI_API_KEY=sk-test-0123456789abcdef"}
		// tmux sets TERM in the pane itself: set it in the command.
		p.run(append(args, "sh", "-c", fmt.Sprintf("cd %q && env %s %q --model m; echo PI-EXIT=$?; exec cat", home, strings.Join(env, " "), bin))...)
		p.waitFor("type a request and press Enter") // the line mode's greeting
		p.run("send-keys", "-t", "pi", "-l", "hi")
		p.run("send-keys", "-t", "pi", "Enter")
		p.waitFor("plain answer")
		p.run("send-keys", "-t", "pi", "C-d")
		p.waitFor("PI-EXIT=0")
	}
	// A pipe on stdin is print mode, never the TUI.
	cmd := exec.Command(bin, "--model", "m")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PI_HOME="+t.TempDir(), "OPENAI_BASE_URL="+srv.URL, "OPENAI_API_KEY=sk-test-0123456789abcdef", "TERM=xterm-256color")
	cmd.Stdin = strings.NewReader("hello from a pipe")
	srv.Add(openai.Reply{Text: "piped answer"})
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "piped answer") || strings.Contains(string(out), "\x1b[") {
		t.Fatalf("piped run: %v\n%q", err, out)
	}
}

// TestTUIExtensionUIInTmux runs the real pi with the ABI 1.1 test guest in
// a tmux terminal: the extension's ui.confirm is asked in the TUI and its
// answer reaches the extension; its ui.notify is a transcript line; the
// log lines of a guest panic during the TUI are shown in the transcript
// and never written to stderr (which would garble the screen).
func TestTUIExtensionUIInTmux(t *testing.T) {
	tmux := tmuxPath(t)
	bin := realPi(t)
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/raw11")
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "crash", Arguments: "{}"}}},
		openai.Reply{Text: "answer after the crash"},
	)
	dir, home := t.TempDir(), t.TempDir()
	stderrFile := filepath.Join(home, "stderr.txt")
	p := &tmuxPane{t: t, tmux: tmux, socket: fmt.Sprintf("pi-test-ui-%d", os.Getpid())}
	t.Cleanup(func() { exec.Command(tmux, "-L", p.socket, "kill-server").Run() })
	script := fmt.Sprintf("cd %q && TERM=xterm-256color %q --model test-model -e %q 2>%q; echo PI-EXIT=$?; exec cat", dir, bin, wasm, stderrFile)
	p.run("new-session", "-d", "-s", "pi", "-x", "120", "-y", "40",
		"-e", "PI_HOME="+filepath.Join(home, "pi"), "-e", "HOME="+home,
		"-e", "OPENAI_BASE_URL="+srv.URL, "-e", "OPENAI_API_KEY=sk-test-0123456789abcdef",
		"-e", "NO_COLOR=", "-e", "PI_TUI=", "-e", "PI_CACHE_DIR="+os.Getenv("PI_CACHE_DIR"),
		"sh", "-c", script)
	p.waitFor("Enter sends", "test-model")
	p.run("send-keys", "-t", "pi", "-l", `/probe ui.confirm {"title":"Deploy?","message":"to prod"}`)
	p.run("send-keys", "-t", "pi", "Enter")
	p.waitFor("? [raw11] Deploy?", "[y]es / [n]o")
	p.run("send-keys", "-t", "pi", "-l", "y")
	p.waitFor(`{"ok":true,"result":{"confirmed":true}}`, "? [raw11] Deploy? → yes")
	p.run("send-keys", "-t", "pi", "-l", `/probe ui.notify {"message":"from the guest","level":"warning"}`)
	p.run("send-keys", "-t", "pi", "Enter")
	p.waitFor("! warning: [raw11] from the guest")
	p.run("send-keys", "-t", "pi", "-l", "crash please")
	p.run("send-keys", "-t", "pi", "Enter")
	p.waitFor("pi.ext.raw11: panic: crash requested", "answer after the crash")
	p.run("send-keys", "-t", "pi", "C-d")
	p.waitFor("PI-EXIT=0")
	data, err := os.ReadFile(stderrFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "crash requested") || strings.Contains(string(data), "from the guest") {
		t.Fatalf("the TUI's stderr got log lines or notices while it ran:\n%s", data)
	}
}
