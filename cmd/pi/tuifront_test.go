package main

import (
	"context"
	"io"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/pi-go/pi/cmd/pi/internal/tui"
	"github.com/pi-go/pi/internal/testkit/waitbuf"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/llm"
)

// TestTUIOptionsRouteOutput: with the options the TUI front end sets,
// configuration warnings, log lines and compile progress go to stderr
// before the TUI runs and after it ended, and into its transcript (never
// stderr) while it runs; the runtime's UI is the TUI.
func TestTUIOptionsRouteOutput(t *testing.T) {
	isolate(t)
	ui := tui.New()
	stderr := waitbuf.New()
	opts := app.Options{Cwd: t.TempDir(), LogLevel: "warn"}
	tuiOptions(&opts, ui, stderr)
	if opts.UI != ui || opts.Mode != app.ModeInteractive {
		t.Fatalf("the TUI is not the runtime's UI: %v, mode %q", opts.UI, opts.Mode)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rt, err := app.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	conv, err := conversation.New(rt, conversation.Options{Session: &conversation.SessionOptions{}, Provider: llm.NewScripted(llm.Script{}), ModelName: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()

	opts.OnWarning("warning-before")
	opts.CompileProgress("before.wasm")(time.Second, nil)
	rt.Logger().Warn("log-before")
	for _, want := range []string{"pi: warning: warning-before", "pi: compiling before.wasm (first load only)…", "pi: compiled before.wasm: done in 1.0s", "log-before"} {
		stderr.WaitFor(t, ansi.Strip, want, 1, 20*time.Second)
	}

	screen := waitbuf.New()
	in, keys := io.Pipe()
	defer keys.Close()
	done := make(chan int, 1)
	go func() {
		done <- ui.Run(ctx, tui.Config{
			Conversation: conv, Input: in, Output: screen,
			ProgramOptions: []tea.ProgramOption{tea.WithoutSignals()},
		})
	}()
	screen.WaitFor(t, ansi.Strip, "Enter sends", 1, 20*time.Second)
	before := stderr.String()
	opts.OnWarning("warning-during")
	opts.CompileProgress("during.wasm")(2*time.Second, nil)
	rt.Logger().Error("log-during")
	rt.UI().Notify("notice-during", app.NotifyWarning)
	for _, want := range []string{"pi: warning: warning-during", "pi: compiling during.wasm (first load only)…", "pi: compiled during.wasm: done in 2.0s", "[ERROR] pi: log-during", "! warning: notice-during"} {
		screen.WaitFor(t, ansi.Strip, want, 1, 20*time.Second)
	}
	io.WriteString(keys, "\x04") // Ctrl-D
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the TUI did not exit")
	}
	if s := stderr.String(); s != before {
		t.Fatalf("stderr got %q while the TUI ran", s[len(before):])
	}
	rt.Logger().Warn("log-after")
	stderr.WaitFor(t, ansi.Strip, "log-after", 1, 20*time.Second)
}
