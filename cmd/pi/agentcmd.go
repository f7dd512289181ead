package main

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

	"github.com/pi-go/pi/cmd/pi/internal/tui"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/redact"
	"github.com/pi-go/pi/runtime/tool"
)

const agentUsage = `
Running the agent: pi [flags] [@FILE...] [MESSAGE...]

  pi                          the terminal UI on a terminal (docs/interactive.md)
  pi "PROMPT"                 interactive, starting with PROMPT
  pi -p "PROMPT"              print mode: stream the answer to stdout, a line per
                              tool call to stderr; exit 0 on success, 1 on a
                              model or provider error, 130 when interrupted
  pi -p "FIRST" "THEN"        several messages: each is sent when the one
                              before is answered
  pi -p @main.go "explain"    attach files: text inline, images as images
  cmd | pi -p "QUESTION"      piped stdin comes first, then the files, then
                              the first message

Flags may stand before or after the messages; the flags every command takes
(--cwd, --config, --trust, --tools, --log-level, -e) may also stand before a
command (pi --trust tool call ...). After --, words are messages as they are,
even when they start with - or @ or look like a command.

The API key is read from the env var named by [model] api_key_env (default
OPENAI_API_KEY). --script FILE plays a scripted model instead of calling one:
{"turns":[{"text":"...","toolCalls":[{"name":"read","arguments":{"path":"x"}}]},{"text":"done"}]}.

In interactive mode: Enter sends, Alt+Enter adds a line, Esc or Ctrl-C
cancels the running turn (and its bash commands), Ctrl-D exits; /help lists
the commands (/new, /resume, /name, /fork, /compact [INSTRUCTIONS], /model,
/tools, /ext, /permissions), !COMMAND runs a shell command into the
conversation, @PATH attaches a file. NO_COLOR, TERM=dumb or PI_TUI=0 select
the plain line mode.
A line (or a -p prompt) that starts with /NAME runs the slash command NAME
of pi or of an extension; an unknown /x is an error in interactive mode and
goes to the model with -p (it may be a path).

Sessions: every run is saved as a session in the reference agent's format,
in $PI_HOME/sessions/--CWD--/ (see docs/sessions.md). -c continues the latest
one, -r picks one, --session PATH|ID-PREFIX resumes one, --fork copies one
into a new session, --no-session saves nothing; 'pi sessions list' lists them.
`

type agentFlags struct {
	commonFlags
	print        bool
	mode         string
	model        string
	baseURL      string
	apiKey       string
	script       string
	systemPrompt string
	appendPrompt string
	interactive  bool
	maxTurns     int
	yes          bool
	version      bool
	sess         sessionFlags
}

func cmdAgent(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f agentFlags
	fs := newFlagSet("pi", mainUsage+"\n"+agentUsage, stdout, stderr)
	f.commonFlags.register(fs)
	fs.BoolVar(&f.print, "p", false, "print mode: answer the prompt once and exit")
	fs.BoolVar(&f.print, "print", false, "same as -p")
	fs.StringVar(&f.mode, "mode", "text", "output `MODE`: text; json (events as JSON lines); rpc (commands on stdin, responses and events on stdout: docs/rpc.md)")
	fs.StringVar(&f.model, "model", "", "model `NAME`")
	fs.StringVar(&f.baseURL, "base-url", "", "OpenAI-compatible endpoint `URL` (e.g. http://localhost:11434/v1)")
	fs.StringVar(&f.apiKey, "api-key", "", "API `KEY` (prefer the environment: see [model] api_key_env)")
	fs.StringVar(&f.script, "script", "", "play a scripted model from the JSON `FILE` instead of calling one")
	fs.StringVar(&f.systemPrompt, "system-prompt", "", "replace the system prompt with `TEXT`")
	fs.StringVar(&f.appendPrompt, "append-system-prompt", "", "append `TEXT` to the system prompt")
	fs.BoolVar(&f.interactive, "interactive", false, "interactive line mode even when stdin is not a terminal")
	fs.IntVar(&f.maxTurns, "max-turns", 0, "stop after `N` model turns (0: no limit)")
	fs.BoolVar(&f.yes, "yes", false, "approve the calls that extensions or permission rules ask about, without asking (never overrides a block)")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	fs.BoolVar(&f.version, "v", false, "same as --version")
	f.sess.register(fs)
	head, literal := cutDashDash(args)
	pos, code, done := parseArgs(fs, head)
	if done {
		return code
	}
	if f.version {
		return cmdVersion(nil, stdout, stderr)
	}
	if err := f.sess.check(); err != nil {
		return usageError(stderr, "", "%v", err)
	}
	if f.mode != "text" && f.mode != "json" && f.mode != "rpc" {
		return usageError(stderr, "", "--mode must be text, json or rpc, not %q", f.mode)
	}
	if f.mode == "rpc" {
		return cmdRPC(&f, append(pos, literal...), stdin, stdout, stderr)
	}
	interactive := f.interactive || (!f.print && f.mode == "text" && isTerminal(stdin))
	prompts, code, ok := initialPrompts(&f, pos, literal, interactive, stdin, stderr)
	if !ok {
		return code
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	opts := f.commonFlags.appOptions(stderr, app.ModelOptions{Name: f.model, BaseURL: f.baseURL, APIKey: f.apiKey})
	opts.Yes = f.yes
	opts.Session = f.sess.options()
	opts.Mode = app.ModePrint
	if f.mode == "json" {
		opts.Mode = app.ModeJSON
	}
	var lines *bufio.Scanner
	var askRedactor *redact.Redactor // set once the runtime is open
	if interactive || (f.sess.resume && isTerminal(stdin)) {
		lines = bufio.NewScanner(stdin)
		lines.Buffer(make([]byte, 64*1024), 4*1024*1024)
	}
	var ui *tui.UI // the terminal UI, else the line mode
	if interactive && useTUI(stdin, stdout) {
		ui = tui.New()
		opts.Ask = ui.Ask
		tuiOptions(&opts, ui, stderr)
	} else if interactive {
		opts.Ask = lineApprover(lines, stdout, func() *redact.Redactor { return askRedactor })
		opts.Mode, opts.UI = app.ModeInteractive, &lineUI{lines: lines, out: stdout}
	}
	if f.sess.resume {
		if code, ok := resumePick(&f, opts.Session, stdin, lines, stdout, stderr); !ok {
			return code
		}
	}
	rt, err := app.Open(ctx, opts)
	if err != nil {
		return openFailed(stderr, err, f.apiKey)
	}
	defer rt.Close()
	askRedactor = rt.Redactor()
	// Errors from here on are printed with the key redacted.
	errOut := rt.Redactor().Writer(stderr)
	if f.mode == "json" {
		// The session header first, as the reference agent does.
		if b, err := json.Marshal(rt.Session().Header()); err == nil {
			stdout.Write(append(rt.Redactor().Bytes(b), '\n'))
		}
	}
	var provider llm.Provider
	if f.script != "" {
		s, err := llm.LoadScript(f.script)
		if err != nil {
			fmt.Fprintf(errOut, "pi: %v\n", err)
			return exitError
		}
		provider = llm.NewScripted(s)
	}
	if ui != nil {
		first := ""
		if len(prompts) > 0 {
			first = submitted(prompts[0]).Text
		}
		return runTUI(ctx, ui, rt, &f, provider, first, stdin, stdout, errOut)
	}
	ag, err := rt.NewAgent(app.AgentOptions{
		Provider: provider, SystemPrompt: f.systemPrompt, AppendSystemPrompt: f.appendPrompt,
		OnEvent: eventSink(f.mode, interactive, rt.Redactor(), stdout, stderr), MaxTurns: f.maxTurns,
	})
	if err != nil {
		fmt.Fprintf(errOut, "pi: %v\n", err)
		return exitError
	}
	if interactive {
		return interactiveLoop(ctx, rt, ag, prompts, lines, stdout, errOut)
	}
	return printRun(ctx, rt, ag, prompts, showFunc(f.mode, rt.Redactor(), stdout), errOut)
}

// resumePick handles -r: on a terminal it lists this directory's sessions
// and sets o.Path to the one picked; otherwise it prints the list and
// fails with exitUsage. ok false means return code now.
func resumePick(f *agentFlags, o *app.SessionOptions, stdin io.Reader, lines *bufio.Scanner, stdout, stderr io.Writer) (code int, ok bool) {
	infos, err := app.ListSessions("", f.cwd, *o)
	if err != nil {
		fmt.Fprintf(stderr, "pi: %v\n", err)
		return exitError, false
	}
	if !isTerminal(stdin) {
		if len(infos) == 0 {
			fmt.Fprintln(stderr, "pi: -r: there are no sessions of this directory to resume")
		} else {
			fmt.Fprintln(stderr, "Sessions of this directory, the latest first:")
			writeSessionList(stderr, infos, false, time.Now())
			fmt.Fprintln(stderr, "pi: -r picks a session on a terminal; without one, pass --session ID-PREFIX (an id above) or -c for the latest")
		}
		return exitUsage, false
	}
	if len(infos) == 0 {
		fmt.Fprintln(stderr, "pi: -r: there are no sessions of this directory to resume; start one with pi")
		return exitError, false
	}
	path := pickSession(infos, lines, stdout)
	if path == "" {
		fmt.Fprintln(stdout, "No session selected.")
		return exitOK, false
	}
	o.Path = path
	return 0, true
}

// eventSink renders the run's events for the output mode: JSON lines, or
// text (tool lines on stdout in interactive mode, on stderr in print mode).
func eventSink(mode string, interactive bool, r *redact.Redactor, stdout, stderr io.Writer) func(agent.Event) {
	switch {
	case mode == "json":
		return jsonEventWriter(stdout, r)
	case interactive:
		return (&textRenderer{out: stdout, tools: stdout, preview: 4, redactor: r, spin: &spinner{w: terminalOrNil(stderr)}}).onEvent
	default:
		return (&textRenderer{out: stdout, tools: stderr, redactor: r, spin: &spinner{}}).onEvent
	}
}

func terminalOrNil(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && isTerminalFile(f) {
		return w
	}
	return nil
}

func isTerminalFile(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// printRun runs the prompts one after the other (each a /command, or
// through the input hooks to the model, a run of its own); Ctrl-C or
// SIGTERM cancels the one running, and a failed one stops the rest.
func printRun(parent context.Context, rt *app.Runtime, ag *agent.Agent, prompts []llm.Message, show func(string), stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, p := range prompts {
		sub, err := rt.Submit(ctx, ag, submitted(p), app.SubmitOptions{Show: show})
		if err != nil {
			fmt.Fprintf(stderr, "\npi: %v\n", err)
			return exitError
		}
		res := sub.Result
		if res == nil {
			continue // a command, or a prompt an input hook handled
		}
		if res.StopReason == llm.StopAborted {
			fmt.Fprintln(stderr, "\npi: interrupted")
			return 130
		}
		maxTurnsNotice(res, stderr)
	}
	return exitOK
}

// interactiveLoop reads prompts line by line. Ctrl-C cancels the running turn;
// at the prompt it only reminds how to exit; Ctrl-D (end of input) exits.
func interactiveLoop(parent context.Context, rt *app.Runtime, ag *agent.Agent, first []llm.Message, lines *bufio.Scanner, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	var mu sync.Mutex
	var cancelTurn context.CancelFunc
	quit := make(chan struct{})
	go func() {
		for s := range sigs {
			mu.Lock()
			c := cancelTurn
			mu.Unlock()
			if s == syscall.SIGTERM {
				close(quit)
				if c != nil {
					c()
				}
				return
			}
			if c != nil {
				c()
			} else {
				fmt.Fprint(stderr, "\n(Ctrl-D exits)\n> ")
			}
		}
	}()

	fmt.Fprintln(stdout, "pi — type a request and press Enter; Ctrl-C cancels a turn, Ctrl-D exits.")
	prompt, queued := "", first
	for {
		var msg *llm.Message // a prompt from the command line
		if prompt == "" && len(queued) > 0 {
			msg, queued = &queued[0], queued[1:]
			prompt = messageText(*msg)
		}
		if prompt == "" {
			fmt.Fprint(stdout, "> ")
			if !lines.Scan() {
				fmt.Fprintln(stdout)
				return exitOK
			}
			prompt = strings.TrimSpace(lines.Text())
			if prompt == "" {
				continue
			}
		} else {
			fmt.Fprintf(stdout, "> %s\n", prompt)
		}
		select {
		case <-quit:
			return exitOK
		default:
		}
		ctx, c := context.WithCancel(parent)
		mu.Lock()
		cancelTurn = c
		mu.Unlock()
		if instructions, ok := compactCommand(prompt); ok {
			runCompact(ctx, rt.Compact, instructions, stdout, stderr)
			mu.Lock()
			cancelTurn = nil
			mu.Unlock()
			c()
			prompt = ""
			continue
		}
		p := app.Prompt{Text: prompt}
		if msg != nil {
			p = submitted(*msg)
		}
		sub, err := rt.Submit(ctx, ag, p, app.SubmitOptions{Interactive: true, Show: func(s string) {
			fmt.Fprintln(stdout, printable(rt.Redactor().String(s)))
		}})
		mu.Lock()
		cancelTurn = nil
		mu.Unlock()
		c()
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "\npi: %v\n", err)
		case sub.Exit:
			return exitOK
		case sub.Result != nil && sub.Result.StopReason == llm.StopAborted:
			fmt.Fprintln(stderr, "\n(turn cancelled)")
		case sub.Result != nil:
			maxTurnsNotice(sub.Result, stderr)
		}
		prompt = ""
	}
}

// submitted is a prompt message as Submit takes it: its text blocks (an
// attached text file is one) joined, then its images.
func submitted(m llm.Message) app.Prompt {
	var p app.Prompt
	var texts []string
	for _, b := range m.Content {
		if b.Type == "image" {
			p.Images = append(p.Images, b)
		} else {
			texts = append(texts, b.Text)
		}
	}
	p.Text = strings.Join(texts, "\n")
	return p
}

// compactFunc compacts the conversation (Runtime.Compact).
type compactFunc func(ctx context.Context, instructions string) (*agent.CompactionResult, error)

// compactCommand recognizes "/compact [INSTRUCTIONS]".
func compactCommand(line string) (instructions string, ok bool) {
	if line == "/compact" {
		return "", true
	}
	if rest, found := strings.CutPrefix(line, "/compact "); found {
		return strings.TrimSpace(rest), true
	}
	return "", false
}

// runCompact runs /compact and says what came of it.
func runCompact(ctx context.Context, compact compactFunc, instructions string, stdout, stderr io.Writer) {
	res, err := compact(ctx, instructions)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "(compaction cancelled)")
	case err != nil:
		fmt.Fprintf(stderr, "pi: compact: %v\n", err)
	default:
		fmt.Fprintf(stdout, "Compacted: %d tokens of conversation summarized; the conversation goes on from the summary.\n", res.TokensBefore)
	}
}

// lineApprover asks the person on the terminal, one line: y or yes
// approves this call, a or always approves it and every later call that
// only the same rules (or hook questions) ask about, for the rest of the
// session; anything else (Enter included) declines. It reads the prompt's
// own line reader, which is idle while a turn runs.
func lineApprover(lines *bufio.Scanner, stdout io.Writer, redactor func() *redact.Redactor) app.AskFunc {
	return func(ctx context.Context, req tool.ApprovalRequest) (app.ApprovalAnswer, error) {
		out := stdout
		if r := redactor(); r != nil {
			out = r.Writer(stdout)
		}
		fmt.Fprintf(out, "\n? %s %s\n  %s\n  allow? [y]es / [N]o / [a]lways for this session: ", req.Call.Name, printable(callSummary(req.Call)), printable(strings.Join(req.Questions, "\n  ")))
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
	}
}

// callSummary is what the person needs to see of a call: a bash command as
// it is, other arguments as compact JSON, cut at 300 bytes.
func callSummary(c tool.CallInfo) string {
	var args struct {
		Command *string `json:"command"`
	}
	s := string(c.Input)
	if json.Unmarshal(c.Input, &args) == nil && args.Command != nil {
		s = "$ " + *args.Command
	}
	return truncateForMessage(s, 300)
}

// jsonEventWriter writes each event as one JSON line, with the API key
// redacted.
func jsonEventWriter(w io.Writer, r *redact.Redactor) func(agent.Event) {
	var mu sync.Mutex
	return func(ev agent.Event) {
		b, err := json.Marshal(ev)
		b = r.Bytes(b)
		if err != nil {
			b, _ = json.Marshal(map[string]string{"type": string(ev.Type), "error": "encode event: " + err.Error()})
		}
		mu.Lock()
		defer mu.Unlock()
		w.Write(append(b, '\n'))
	}
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
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
