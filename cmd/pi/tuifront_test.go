package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/pi-go/pi/cmd/pi/internal/tui"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
)

// waitBuffer is a buffer that wakes waiters on each write.
type waitBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	change chan struct{}
}

func newWaitBuffer() *waitBuffer { return &waitBuffer{change: make(chan struct{})} }

func (b *waitBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	close(b.change)
	b.change = make(chan struct{})
	return len(p), nil
}

func (b *waitBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the buffer, escape sequences removed, holds want.
func (b *waitBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		b.mu.Lock()
		text, change := ansi.Strip(b.buf.String()), b.change
		b.mu.Unlock()
		if strings.Contains(text, want) {
			return
		}
		select {
		case <-change:
		case <-deadline:
			t.Fatalf("did not show %q within 20s:\n%s", want, text)
		}
	}
}

// TestTUIOptionsRouteOutput: with the options the TUI front end sets,
// configuration warnings, log lines and compile progress go to stderr
// before the TUI runs and after it ended, and into its transcript (never
// stderr) while it runs; the runtime's UI is the TUI.
func TestTUIOptionsRouteOutput(t *testing.T) {
	isolate(t)
	ui := tui.New()
	stderr := newWaitBuffer()
	opts := app.Options{Cwd: t.TempDir(), Session: &app.SessionOptions{}, LogLevel: "warn"}
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

	opts.OnWarning("warning-before")
	opts.CompileProgress("before.wasm")(time.Second, nil)
	rt.Logger().Warn("log-before")
	for _, want := range []string{"pi: warning: warning-before", "pi: compiling before.wasm (first load only)…", "pi: compiled before.wasm: done in 1.0s", "log-before"} {
		stderr.waitFor(t, want)
	}

	screen := newWaitBuffer()
	in, keys := io.Pipe()
	defer keys.Close()
	done := make(chan int, 1)
	go func() {
		done <- ui.Run(ctx, tui.Config{
			Runtime: rt,
			NewAgent: func(onEvent func(agent.Event)) (*agent.Agent, error) {
				return rt.NewAgent(app.AgentOptions{Provider: llm.NewScripted(llm.Script{}), OnEvent: onEvent})
			},
			FixedModel: "scripted", Input: in, Output: screen,
			ProgramOptions: []tea.ProgramOption{tea.WithoutSignals()},
		})
	}()
	screen.waitFor(t, "Enter sends")
	before := stderr.String()
	opts.OnWarning("warning-during")
	opts.CompileProgress("during.wasm")(2*time.Second, nil)
	rt.Logger().Error("log-during")
	rt.UI().Notify("notice-during", app.NotifyWarning)
	for _, want := range []string{"pi: warning: warning-during", "pi: compiling during.wasm (first load only)…", "pi: compiled during.wasm: done in 2.0s", "[ERROR] pi: log-during", "! warning: notice-during"} {
		screen.waitFor(t, want)
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
	stderr.waitFor(t, "log-after")
}
