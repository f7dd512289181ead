// Package tui is pi's interactive terminal UI: an editor with history and
// multi-line input, the assistant's answer streamed as markdown, tool calls
// shown as they run, approvals asked in place, slash commands, !cmd and
// @file. It is built on bubbletea (the event loop and renderer), bubbles'
// textarea (the editor), lipgloss (colours) and goldmark's CommonMark
// parser (markdown, laid out for the terminal by markdown.go).
//
// The TUI is a front end over a runtime/conversation Conversation: every
// line goes to it (input hooks, pi's and the extensions' slash commands,
// the model) and the TUI shows what comes back; only picking a session
// for /resume is its own. cmd/pi chooses it when stdin and stdout are
// terminals and TERM is not dumb (PI_TUI=0 picks the line mode).
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/tool"
)

// Prompt is a line the TUI hands to the conversation: the text as typed
// with the text of attached files inlined after it, and attached images.
type Prompt struct {
	Text   string
	Images []content.Block
}

// Config says what the TUI runs.
type Config struct {
	// Conversation is what the TUI drives. Required.
	Conversation *conversation.Conversation
	// FirstPrompt is sent as soon as the TUI starts ("" for none).
	FirstPrompt string
	// HistoryFile keeps the prompt history ("" keeps it in memory).
	HistoryFile string
	// Input and Output are the terminal; nil means stdin and stdout.
	Input  io.Reader
	Output io.Writer
	// ProgramOptions are more bubbletea options (tests).
	ProgramOptions []tea.ProgramOption
	// profile, when set, is the colour profile instead of the output's
	// (tests; NO_COLOR still wins).
	profile *termenv.Profile
}

// UI is the TUI. Make it with New before app.Open, so that it can be the
// runtime's Options.Approver and Options.UI and its LogWriter
// Options.LogOutput; then Run, once.
type UI struct {
	mu   sync.Mutex
	send func(tea.Msg)
	// work counts the goroutines running a turn, a command or a bash
	// call; Run waits for them after the program ends.
	work sync.WaitGroup

	// done is closed when Run ends: askers waiting then take the
	// default. ended says so too; conv is the conversation Run ran.
	done  chan struct{}
	ended bool
	conv  *conversation.Conversation
	// inbox is what other goroutines posted to the loop (dialog.go);
	// inboxLogs counts its notices and log lines, dropped those that did
	// not fit; wake says a wakeMsg is on its way; nextID numbers dialogs.
	inbox     []inboxItem
	inboxLogs int
	dropped   int
	wake      bool
	nextID    uint64
	// logFallback takes log lines when the TUI does not run; logPartial
	// is a log line not ended yet.
	logFallback io.Writer
	logPartial  []byte
	// ext is what extensions posted for the loop (extui.go).
	ext extQueue
}

// New returns a UI that is not running yet.
func New() *UI { return &UI{done: make(chan struct{})} }

// Approve asks the person about a call in the TUI (the runtime's
// app.Approver): y, n or a (always). Before Run, or after the TUI ended,
// it declines.
func (u *UI) Approve(ctx context.Context, req tool.ApprovalRequest) (app.ApprovalAnswer, error) {
	if !u.Running() {
		return app.Decline, errors.New("no answer: the terminal UI is not running")
	}
	a, answered := u.ask(ctx, &dialog{kind: dialogApproval, req: req})
	if !answered {
		if err := ctx.Err(); err != nil {
			return app.Decline, err
		}
		return app.Decline, errors.New("no answer: the terminal UI ended")
	}
	return a.approval, nil
}

// start makes the UI running: sends go to the program, and what waited
// in the inbox (notices before Run) is shown.
func (u *UI) start(conv *conversation.Conversation, send func(tea.Msg)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.send, u.conv = send, conv
	if len(u.inbox) > 0 && !u.wake {
		u.wake = true
		go send(wakeMsg{})
	}
}

// Run runs the TUI until the person exits; it returns the exit code: 0,
// 130 after a SIGINT from outside, 1 when the terminal failed.
func (u *UI) Run(ctx context.Context, cfg Config) int {
	u.mu.Lock()
	again := u.ended || u.send != nil
	u.mu.Unlock()
	if again {
		fmt.Fprintln(outOr(cfg.Output), "pi: tui: a UI runs once; make another with New")
		return 1
	}
	m, err := newModel(ctx, u, cfg)
	if err != nil {
		fmt.Fprintf(outOr(cfg.Output), "pi: %v\n", err)
		return 1
	}
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if cfg.Input != nil {
		opts = append(opts, tea.WithInput(cfg.Input))
	}
	if cfg.Output != nil {
		opts = append(opts, tea.WithOutput(cfg.Output))
	}
	opts = append(opts, cfg.ProgramOptions...)
	p := tea.NewProgram(m, opts...)
	u.start(cfg.Conversation, p.Send)
	_, err = p.Run()
	m.unsubscribe()
	u.end()
	m.shutdownComponents()
	m.stopWork()
	u.wait(5 * time.Second)
	if errors.Is(err, tea.ErrInterrupted) {
		return 130 // SIGINT from outside (Ctrl-C itself is a key here)
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(outOr(cfg.Output), "pi: terminal: %v\n", err)
		return 1
	}
	return m.exitCode
}

// wait waits for running work to end, at most d.
func (u *UI) wait(d time.Duration) {
	done := make(chan struct{})
	go func() {
		u.work.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

func outOr(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
