//go:build !wasip1

package main

import (
	"os"
	"strings"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestAsk: with -p, /ask and /askwith start a run with the message the
// extension sent, which the model sees as the user's.
func TestAsk(t *testing.T) {
	p := porttest.New(t, "send-user-message", porttest.Build(t, "."), "")
	srv := openai.NewServer(t, openai.Reply{Text: "first"}, openai.Reply{Text: "second"})
	model := []string{"--base-url", srv.URL, "--model", "M", "--api-key", "k"}
	out, stderr, code := p.Run("", append([]string{"-p", "/ask what is 2+2?"}, model...)...)
	if code != 0 || !strings.Contains(out, "first") {
		t.Fatalf("/ask: exit %d, %q %s", code, out, stderr)
	}
	out, stderr, code = p.Run("", append([]string{"-p", "/askwith list files"}, model...)...)
	if code != 0 || !strings.Contains(out, "second") {
		t.Fatalf("/askwith: exit %d, %q %s", code, out, stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if !porttest.Contains(reqs[0], "what is 2+2?") || !porttest.Contains(reqs[1], "User request: list files") || !porttest.Contains(reqs[1], "Please respond concisely.") {
		t.Errorf("requests:\n%s\n%s", reqs[0], reqs[1])
	}
	if out, _, _ := p.Run("", append([]string{"-p", "/ask"}, model...)...); !strings.Contains(out, "Usage: /ask <message>") {
		t.Errorf("/ask alone: %q", out)
	}
}

// TestAskLineMode: the line mode shows the message the extension sent as
// the prompt of the run it starts (the person typed only the command).
func TestAskLineMode(t *testing.T) {
	p := porttest.New(t, "send-user-message", porttest.Build(t, "."), "")
	srv := openai.NewServer(t, openai.Reply{Text: "the answer is four"})
	out, stderr, code := p.Run("/ask what is 2+2?\n/exit\n", "--interactive", "--base-url", srv.URL, "--model", "M", "--api-key", "k")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, out, stderr)
	}
	i, j := strings.Index(out, "> what is 2+2?\n"), strings.Index(out, "the answer is four")
	if i < 0 || j < i {
		t.Errorf("the line mode did not show the extension's message before the answer:\n%s", out)
	}
	if strings.Count(out, "what is 2+2?") != 1 {
		t.Errorf("the message is shown %d times:\n%s", strings.Count(out, "what is 2+2?"), out)
	}
}
