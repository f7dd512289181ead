package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pi-go/pi/cmd/pi/internal/tui"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
)

// HistoryFileName is the prompt history of the TUI, in PI_HOME.
const historyFileName = "prompt-history.jsonl"

// useTUI says whether interactive mode gets the terminal UI: stdin and
// stdout are terminals, TERM is set and not "dumb", and NO_COLOR is not
// set. Otherwise the line mode runs (a pipe never starts the TUI).
func useTUI(stdin io.Reader, stdout io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("PI_TUI") == "0" {
		return false
	}
	if t := os.Getenv("TERM"); t == "" || t == "dumb" {
		return false
	}
	out, ok := stdout.(*os.File)
	return ok && isTerminal(stdin) && isTerminalFile(out)
}

// tuiOptions makes the terminal UI the runtime's app.UI (extensions'
// ui.confirm and ui.notify) and keeps what the runtime writes on stderr
// off the TUI's screen while it runs: log lines, configuration warnings
// and compile progress go to its transcript then, and to stderr before
// and after.
func tuiOptions(opts *app.Options, ui *tui.UI, stderr io.Writer) {
	opts.Mode, opts.UI = app.ModeInteractive, ui
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
func runTUI(ctx context.Context, ui *tui.UI, rt *app.Runtime, f *agentFlags, provider llm.Provider, prompt string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg := tui.Config{
		Runtime: rt,
		NewAgent: func(onEvent func(agent.Event)) (*agent.Agent, error) {
			return rt.NewAgent(app.AgentOptions{
				Provider: provider, SystemPrompt: f.systemPrompt, AppendSystemPrompt: f.appendPrompt,
				OnEvent: onEvent, MaxTurns: f.maxTurns,
			})
		},
		// Lines the TUI's own commands do not take go through the runtime:
		// input hooks, extension commands, the model.
		Dispatch:    tui.Submit(rt),
		FirstPrompt: prompt,
		HistoryFile: filepath.Join(rt.PIHome(), historyFileName),
		Input:       stdin,
		Output:      stdout,
	}
	if provider != nil {
		cfg.FixedModel = "scripted (" + filepath.Base(f.script) + ")"
	}
	code := ui.Run(ctx, cfg)
	if code == 1 {
		fmt.Fprintln(stderr, "pi: the terminal UI failed; PI_TUI=0 (or NO_COLOR=1) selects the line mode")
	}
	return code
}
