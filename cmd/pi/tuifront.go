package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/cmd/pi/internal/textmode"
	"github.com/pi-go/pi/cmd/pi/internal/tui"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/conversation"
)

// HistoryFileName is the prompt history of the TUI, in PI_HOME.
const historyFileName = "prompt-history.jsonl"

// useTUI says whether interactive mode gets the terminal UI: stdin and
// stdout are terminals, TERM is set and not "dumb", and PI_TUI is not 0.
// Otherwise the line mode runs (a pipe never starts the TUI). NO_COLOR
// keeps the TUI, without colour, as the reference agent does.
func useTUI(stdin io.Reader, stdout io.Writer) bool {
	if os.Getenv("PI_TUI") == "0" {
		return false
	}
	if t := os.Getenv("TERM"); t == "" || t == "dumb" {
		return false
	}
	out, ok := termtext.Raw(stdout).(*os.File)
	return ok && isTerminal(stdin) && textmode.IsTerminal(out)
}

// tuiOptions makes the terminal UI the runtime's app.UI (extensions'
// ui.confirm and ui.notify) and keeps what the runtime writes on stderr
// off the TUI's screen while it runs: log lines, configuration warnings
// and compile progress go to its transcript then, and to stderr before
// and after.
func tuiOptions(opts *app.Options, ui *tui.UI, stderr io.Writer) {
	opts.Mode, opts.UI, opts.Approver = app.ModeInteractive, ui, app.ApproverFunc(ui.Approve)
	opts.TUI = true
	logs := ui.LogWriter(stderr)
	opts.LogOutput = logs
	opts.OnWarning = func(w string) { fmt.Fprintf(logs, "pi: warning: %s\n", w) }
	onTerminal := compileProgress(stderr)
	inTUI := compileProgressTo(logs, false, time.Second)
	opts.CompileProgress = func(file string) func(time.Duration, error) {
		if ui.Running() {
			return inTUI(file)
		}
		return onTerminal(file)
	}
}

// runTUI runs the interactive mode in the terminal UI.
func runTUI(ctx context.Context, ui *tui.UI, conv *conversation.Conversation, prompt string, stdin io.Reader, stdout, stderr io.Writer) int {
	code := ui.Run(ctx, tui.Config{
		Conversation: conv,
		FirstPrompt:  prompt,
		HistoryFile:  filepath.Join(conv.Runtime().PIHome(), historyFileName),
		Input:        stdin,
		Output:       termtext.Raw(stdout), // the TUI cleans what it shows itself
	})
	if code == 1 {
		fmt.Fprintln(stderr, "pi: the terminal UI failed; PI_TUI=0 selects the line mode")
	}
	return code
}
