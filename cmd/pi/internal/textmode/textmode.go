// Package textmode holds pi's plain-text front ends over a Conversation:
// print mode (`pi -p`, text or JSON lines) and the interactive line mode
// (TERM=dumb, PI_TUI=0, or stdin that is not a terminal with
// --interactive). Both hand every line to the Conversation, which runs the
// input hooks, pi's and the extensions' slash commands and the model; they
// only read lines, show what comes back and map outcomes to exit codes.
package textmode

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/redact"
	"github.com/pi-go/pi/runtime/tool"
	"golang.org/x/term"
)

// Exit codes of the text front ends.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitInterrupted = 130
)

// Output says where a front end writes: the answer and, in JSON mode, the
// events on Stdout; tool lines (print mode), notices and errors on Stderr.
// Text goes through termtext's rule whether or not it reaches a terminal
// (a file shown later would replay the escapes); JSON lines keep the exact
// text, with what a terminal would act on escaped (termtext.NewJSONWriter).
type Output struct {
	Stdout, Stderr io.Writer
	// JSON writes the events as JSON lines (--mode json).
	JSON bool
}

// Print runs the prompts one after the other (print mode): each goes to the
// Conversation (input hooks, a slash command, or the model: a run of its
// own); Ctrl-C or SIGTERM cancels the one running, and a failed one stops
// the rest. In JSON mode the session header is the first line, then the
// events of the runs, ending with the last agent_end.
func Print(parent context.Context, conv *conversation.Conversation, prompts []conversation.Prompt, out Output) int {
	red := conv.Runtime().Redactor()
	out.Stderr = termtext.NewWriter(out.Stderr)
	if out.JSON {
		out.Stdout = termtext.NewJSONWriter(out.Stdout)
		if b, err := json.Marshal(conv.Session().Header()); err == nil {
			out.Stdout.Write(append(red.Bytes(b), '\n'))
		}
	} else {
		out.Stdout = termtext.NewWriter(out.Stdout)
	}
	errOut := red.Writer(out.Stderr)
	stop := conv.Subscribe(EventSink(out.JSON, false, red, out.Stdout, out.Stderr))
	defer stop()
	ctx, cancelSignals := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer cancelSignals()
	show := showFunc(out.JSON, red, out.Stdout)
	for _, p := range prompts {
		sub, err := conv.Submit(ctx, p, conversation.SubmitOptions{Builtins: true, Show: show})
		res := sub.Result
		switch {
		case res != nil && res.StopReason == llm.StopAborted:
			fmt.Fprintln(errOut, "\npi: interrupted")
			return ExitInterrupted
		case err != nil:
			fmt.Fprintf(errOut, "\npi: %v\n", err)
			return ExitError
		}
		MaxTurnsNotice(res, errOut)
		// Every run an extension started or queued during the prompt
		// ends before pi does (ABI 1.2).
		if err := conv.WaitExtensionRuns(ctx); err != nil {
			fmt.Fprintln(errOut, "\npi: interrupted")
			return ExitInterrupted
		}
	}
	return ExitOK
}

// Line runs the interactive line mode: it reads prompts line by line from
// lines (after the first ones, given on the command line) and hands each to
// the Conversation as a person's: pi's slash commands (/help lists them),
// the extensions' commands and input hooks, !COMMAND into the
// conversation, @PATH attachments. Ctrl-C cancels the running turn; at the
// prompt it only reminds how to exit; Ctrl-D (end of input), /exit or
// /quit exits.
func Line(parent context.Context, conv *conversation.Conversation, first []conversation.Prompt, lines *bufio.Scanner, stdout, stderr io.Writer) int {
	red := conv.Runtime().Redactor()
	stdout, stderr = termtext.NewWriter(stdout), termtext.NewWriter(stderr)
	errOut := red.Writer(stderr)
	stopEvents := conv.Subscribe(EventSink(false, true, red, stdout, stderr))
	defer stopEvents()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	quit := make(chan struct{})
	go func() {
		for s := range sigs {
			if s == syscall.SIGTERM {
				close(quit)
				conv.Abort()
				return
			}
			if conv.Busy() {
				conv.Abort()
			} else {
				fmt.Fprint(stderr, "\n(Ctrl-D exits)\n> ")
			}
		}
	}()

	fmt.Fprintln(stdout, "pi — type a request and press Enter; /help lists the commands; Ctrl-C cancels a turn, Ctrl-D exits.")
	show := func(s string) { fmt.Fprintln(stdout, termtext.Printable(red.String(s))) }
	queued := first
	for {
		var p conversation.Prompt
		if len(queued) > 0 {
			p, queued = queued[0], queued[1:]
			fmt.Fprintf(stdout, "> %s\n", termtext.Printable(red.String(p.Text)))
		} else {
			fmt.Fprint(stdout, "> ")
			if !lines.Scan() {
				fmt.Fprintln(stdout)
				return ExitOK
			}
			text := strings.TrimSpace(lines.Text())
			if text == "" {
				continue
			}
			p = conversation.Prompt{Text: text}
		}
		select {
		case <-quit:
			return ExitOK
		default:
		}
		if cmd, ok := strings.CutPrefix(p.Text, "!"); ok {
			runBash(parent, conv, strings.TrimSpace(cmd), stdout, errOut)
			continue
		}
		if _, _, isCmd := conversation.ParseCommand(p.Text); !isCmd && len(p.Images) == 0 {
			withFiles, err := conversation.Attach(conv.Runtime().Cwd(), p.Text)
			if err != nil {
				fmt.Fprintf(errOut, "pi: %v\n", err)
				continue
			}
			p = withFiles
		}
		// A run an extension started meanwhile (a timer, a bus message,
		// a command's agent.sendUserMessage) is waited for, as the line
		// mode waits for its own: the line runs after it (Ctrl-C aborts
		// it).
		if err := conv.WaitExtensionRuns(parent); err != nil {
			return ExitOK
		}
		sub, err := conv.Submit(parent, p, conversation.SubmitOptions{Interactive: true, Builtins: true, Show: show})
		switch {
		case err != nil && errors.Is(err, context.Canceled):
			fmt.Fprintln(errOut, "\n(cancelled)")
		case err != nil:
			fmt.Fprintf(errOut, "\npi: %v\n", err)
		case sub.Exit:
			return ExitOK
		case sub.Result != nil && sub.Result.StopReason == llm.StopAborted:
			fmt.Fprintln(errOut, "\n(turn cancelled)")
		case sub.Result != nil:
			MaxTurnsNotice(sub.Result, errOut)
		}
	}
}

// runBash runs a person's !COMMAND into the conversation, its output
// streaming.
func runBash(ctx context.Context, conv *conversation.Conversation, command string, stdout, stderr io.Writer) {
	if command == "" {
		fmt.Fprintln(stderr, "!COMMAND runs COMMAND in the shell and adds its output to the conversation")
		return
	}
	red := conv.Runtime().Redactor()
	run, err := conv.RunShellCommand(ctx, command, nil)
	if run != nil {
		fmt.Fprintln(stdout, termtext.Printable(red.String(run.Result.Text())))
	}
	if err != nil {
		fmt.Fprintf(stderr, "pi: %v\n", err)
		return
	}
	fmt.Fprintln(stdout, "(the command and its output are now part of the conversation)")
}

// Approver asks the person on the terminal, one line: y or yes approves
// this call, a or always approves it and every later call that only the
// same rules (or hook questions) ask about, for the rest of the session;
// anything else (Enter included) declines. It reads the prompt's own line
// reader, which is idle while a turn runs. redactor is called at each ask
// (the runtime's, once it is open).
func Approver(lines *bufio.Scanner, stdout io.Writer, redactor func() *redact.Redactor) app.Approver {
	return app.ApproverFunc(func(ctx context.Context, req tool.ApprovalRequest) (app.ApprovalAnswer, error) {
		var out io.Writer = termtext.NewWriter(stdout)
		if r := redactor(); r != nil {
			out = r.Writer(stdout)
		}
		fmt.Fprintf(out, "\n? %s %s\n  %s\n  allow? [y]es / [N]o / [a]lways for this session: ", req.Call.Name, termtext.Printable(app.CallSummary(req.Call)), termtext.Printable(strings.Join(req.Questions, "\n  ")))
		if !lines.Scan() {
			return app.Decline, errors.New("no answer: end of input")
		}
		switch strings.ToLower(strings.TrimSpace(lines.Text())) {
		case "y", "yes":
			return app.ApproveOnce, nil
		case "a", "always":
			return app.ApproveAlways, nil
		}
		return app.Decline, nil
	})
}

// EventSink renders the events for the output mode: JSON lines (without
// session_shutdown, which ends a conversation after the last run's
// agent_end), or text (tool lines on stdout in the line mode, on stderr in
// print mode).
func EventSink(jsonLines, interactive bool, r *redact.Redactor, stdout, stderr io.Writer) func(agent.Event) {
	if jsonLines {
		return jsonEventWriter(termtext.NewJSONWriter(stdout), r)
	}
	// The model's words and the tool lines under termtext's rule; the
	// spinner, pi's own, draws with carriage returns on the terminal.
	out := termtext.NewWriter(stdout)
	if interactive {
		return (&textRenderer{out: out, tools: out, preview: 4, redactor: r, spin: &spinner{w: terminalOrNil(termtext.Raw(stderr))}, custom: true}).onEvent
	}
	return (&textRenderer{out: out, tools: termtext.NewWriter(stderr), redactor: r, spin: &spinner{}}).onEvent
}

func terminalOrNil(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && IsTerminal(f) {
		return w
	}
	return nil
}

// jsonEventWriter writes each event as one JSON line, with the API key
// redacted.
func jsonEventWriter(w io.Writer, r *redact.Redactor) func(agent.Event) {
	var mu sync.Mutex
	return func(ev agent.Event) {
		if ev.Type == agent.EventSessionShutdown || ev.Type == conversation.EventCustomMessage {
			return
		}
		b, err := json.Marshal(conversation.WireEvent(ev))
		b = r.Bytes(b)
		if err != nil {
			b, _ = json.Marshal(map[string]string{"type": string(ev.Type), "error": "encode event: " + err.Error()})
		}
		mu.Lock()
		defer mu.Unlock()
		w.Write(append(b, '\n'))
	}
}

// MaxTurnsNotice says on stderr that --max-turns ended a run while the
// model was still calling tools.
func MaxTurnsNotice(res *agent.RunResult, stderr io.Writer) {
	if res != nil && res.StopReason == agent.StopMaxTurns {
		fmt.Fprintf(stderr, "\npi: stopped after %s (--max-turns): the model was still calling tools; the task may be unfinished\n", plural.Count(res.Turns, "model turn"))
	}
}

// spinner shows that the model is thinking, on a terminal only.
type spinner struct {
	w    io.Writer
	mu   sync.Mutex
	stop chan struct{}
	done chan struct{}
}

func (s *spinner) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil || s.stop != nil {
		return
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	stop, done := s.stop, s.done
	go func() {
		defer close(done)
		frames := `|/-\`
		t := time.NewTicker(120 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(s.w, "\r%c thinking", frames[i%len(frames)])
			select {
			case <-stop:
				fmt.Fprint(s.w, "\r          \r")
				return
			case <-t.C:
			}
		}
	}()
}

func (s *spinner) halt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop == nil {
		return
	}
	close(s.stop)
	<-s.done
	s.stop, s.done = nil, nil
}

// IsTerminal reports whether f is a terminal: a character device that
// answers the terminal ioctl. /dev/null is a character device but no
// terminal, and neither is a closed or redirected descriptor.
func IsTerminal(f *os.File) bool {
	return f != nil && term.IsTerminal(int(f.Fd()))
}
