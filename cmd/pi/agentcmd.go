package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-go/pi/cmd/pi/internal/textmode"
	"github.com/pi-go/pi/cmd/pi/internal/tui"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/redact"
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

The model: --model PROVIDER/ID (or --provider NAME), a provider of the
built-in catalogue or of $PI_HOME/models.json ('pi models' lists them, with
the variable each key is read from); or --base-url URL --model NAME for any
OpenAI-compatible endpoint, the API key read from the env var named by
[model] api_key_env (default OPENAI_API_KEY). --thinking LEVEL (off, minimal,
low, medium, high, xhigh) sets how hard a reasoning model thinks; --models
A,B:high,C is the list Ctrl+P cycles through (an entry's :LEVEL is the level
switching to it sets; without --model, pi starts at the first). --script FILE plays a scripted model instead of calling one:
{"turns":[{"text":"...","toolCalls":[{"name":"read","arguments":{"path":"x"}}]},{"text":"done"}]}.

In interactive mode: Enter sends, Alt+Enter adds a line, Esc or Ctrl-C
cancels the running turn (and its bash commands), Ctrl-D exits; /help lists
the commands (/new, /resume, /name, /fork, /tree, /label, /undo, /redo,
/rewind, /export, /compact [INSTRUCTIONS], /model, /tools, /ext,
/permissions), !COMMAND runs a shell command into the
conversation, @PATH attaches a file. TERM=dumb or PI_TUI=0 select the plain
line mode (the same commands); NO_COLOR keeps the TUI without colours.
A line (or a -p prompt) that starts with /NAME runs the slash command NAME
of pi or of an extension; an unknown /x is an error in interactive mode and
goes to the model with -p (it may be a path).

Sessions: every run is saved as a session in the reference agent's format,
in $PI_HOME/sessions/--CWD--/ (see docs/sessions.md). -c continues the latest
one, -r picks one, --session PATH|ID-PREFIX resumes one, --fork copies one
into a new session, --no-session saves nothing; 'pi sessions list' lists them.
Before and after each turn the project's files are recorded beside the
session for /undo (--no-checkpoints: not).
`

// modelOptions are the model flags.
//
// # Errors
//
// A --thinking value that is not a level.
func (f *agentFlags) modelOptions() (app.ModelOptions, error) {
	mo := app.ModelOptions{Provider: f.provider, Name: f.model, BaseURL: f.baseURL, APIKey: f.apiKey, Thinking: f.thinking}
	// --model ID:LEVEL sets the thinking level too, as the reference's
	// (an ollama tag such as qwen2.5-coder:7b is no level, so it stays).
	if i := strings.LastIndexByte(mo.Name, ':'); i > 0 {
		if _, ok := conversation.ParseThinkingLevel(mo.Name[i+1:]); ok {
			if mo.Thinking == "" {
				mo.Thinking = mo.Name[i+1:]
			}
			mo.Name = mo.Name[:i]
		}
	}
	if f.thinking != "" {
		if _, ok := conversation.ParseThinkingLevel(f.thinking); !ok {
			return mo, fmt.Errorf("--thinking %q: want off, minimal, low, medium, high or xhigh", f.thinking)
		}
	}
	for _, m := range strings.Split(f.scope, ",") {
		if m = strings.TrimSpace(m); m != "" {
			mo.Scope = append(mo.Scope, m)
		}
	}
	return mo, nil
}

type agentFlags struct {
	commonFlags
	print        bool
	mode         string
	model        string
	provider     string
	thinking     string
	scope        string
	baseURL      string
	apiKey       string
	script       string
	systemPrompt string
	appendPrompt string
	interactive  bool
	maxTurns     int
	plan         bool
	yes          bool
	version      bool
	sess         sessionFlags
	ext          extPending // extensions' flags, resolved once they load (extflags.go)
}

func cmdAgent(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f agentFlags
	fs := newFlagSet("pi", mainUsage+"\n"+agentUsage, stdout, stderr)
	f.commonFlags.register(fs)
	fs.BoolVar(&f.print, "p", false, "print mode: answer the prompt once and exit")
	fs.BoolVar(&f.print, "print", false, "same as -p")
	fs.StringVar(&f.mode, "mode", "text", "output `MODE`: text; json (events as JSON lines); rpc (commands on stdin, responses and events on stdout: docs/rpc.md)")
	fs.StringVar(&f.model, "model", "", "model `NAME` or PROVIDER/ID, with :LEVEL to set the thinking level (pi models lists them)")
	fs.StringVar(&f.provider, "provider", "", "model `PROVIDER` of the catalogue or $PI_HOME/models.json (its default model unless --model)")
	fs.StringVar(&f.thinking, "thinking", "", "thinking `LEVEL`: off, minimal, low, medium, high or xhigh")
	fs.StringVar(&f.scope, "models", "", "the models Ctrl+P and cycle_model go through: `LIST` of PROVIDER/ID or ID, comma-separated (globs allowed), each with an optional :LEVEL")
	fs.StringVar(&f.baseURL, "base-url", "", "OpenAI-compatible endpoint `URL` (e.g. http://localhost:11434/v1)")
	fs.StringVar(&f.apiKey, "api-key", "", "API `KEY` (prefer the environment: see [model] api_key_env)")
	fs.StringVar(&f.script, "script", "", "play a scripted model from the JSON `FILE` instead of calling one")
	fs.StringVar(&f.systemPrompt, "system-prompt", "", "replace the system prompt with `TEXT`")
	fs.StringVar(&f.appendPrompt, "append-system-prompt", "", "append `TEXT` to the system prompt")
	fs.BoolVar(&f.interactive, "interactive", false, "interactive line mode even when stdin is not a terminal")
	fs.IntVar(&f.maxTurns, "max-turns", 0, "stop after `N` model turns (0: no limit)")
	fs.BoolVar(&f.plan, "plan", false, "start in plan mode: no write or edit, bash in a read-only sandbox (/plan leaves it)")
	fs.BoolVar(&f.yes, "yes", false, "approve the calls that extensions or permission rules ask about, without asking (never overrides a block)")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	fs.BoolVar(&f.version, "v", false, "same as --version")
	f.sess.register(fs)
	head, literal := cutDashDash(args)
	pos, code, done := parseArgsDeferring(fs, head, &f.ext)
	if done {
		if code == exitOK { // --help: the extensions' flags too
			printExtensionHelp(&f.commonFlags, stdout)
		}
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
	// With flags for the extensions, the prompt's words are known once
	// they are loaded (a string flag takes the word after it).
	var prompts []conversation.Prompt
	if len(f.ext.flags) == 0 {
		var ok bool
		if prompts, code, ok = initialPrompts(&f, pos, literal, interactive, stdin, stderr); !ok {
			return code
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	mo, err := f.modelOptions()
	if err != nil {
		return usageError(stderr, "", "%v", err)
	}
	opts := f.commonFlags.appOptions(stderr, mo)
	opts.ReservedFlags = f.ext.piFlags
	if f.yes {
		opts.Approver = app.YesApprover{}
	}
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
		tuiOptions(&opts, ui, stderr)
	} else if interactive {
		opts.Mode, opts.UI = app.ModeInteractive, textmode.NewLineUI(lines, stdout)
		if !f.yes {
			opts.Approver = textmode.Approver(lines, stdout, func() *redact.Redactor { return askRedactor })
		}
	}
	sessOpts := f.sess.options()
	if f.sess.resume {
		if code, ok := resumePick(&f, sessOpts, stdin, lines, stdout, stderr); !ok {
			return code
		}
	}
	rt, err := app.Open(ctx, opts)
	if err != nil {
		return openFailed(stderr, err, f.apiKey)
	}
	defer rt.Close()
	if pos, err = resolveExtFlags(rt, &f.ext, pos); err != nil {
		return usageError(stderr, "", "%v", err)
	}
	if len(f.ext.flags) > 0 {
		var ok bool
		if prompts, code, ok = initialPrompts(&f, pos, literal, interactive, stdin, stderr); !ok {
			return code
		}
	}
	askRedactor = rt.Redactor()
	// Errors from here on are printed with the key redacted.
	errOut := rt.Redactor().Writer(stderr)
	co := conversation.Options{
		Session: sessOpts, SystemPrompt: f.systemPrompt, AppendSystemPrompt: f.appendPrompt, MaxTurns: f.maxTurns,
		Plan: f.plan,
	}
	if f.script != "" {
		s, err := llm.LoadScript(f.script)
		if err != nil {
			fmt.Fprintf(errOut, "pi: %v\n", err)
			return exitError
		}
		co.Provider, co.ModelName = llm.NewScripted(s), "scripted ("+filepath.Base(f.script)+")"
	}
	conv, err := conversation.New(rt, co)
	if err != nil {
		fmt.Fprintf(errOut, "pi: %v\n", err)
		return exitError
	}
	defer conv.Close()
	switch {
	case ui != nil:
		first := ""
		if len(prompts) > 0 {
			first = prompts[0].Text
		}
		return runTUI(ctx, ui, conv, first, stdin, stdout, errOut)
	case interactive:
		return textmode.Line(ctx, conv, prompts, lines, stdout, stderr)
	}
	return textmode.Print(ctx, conv, prompts, textmode.Output{Stdout: stdout, Stderr: stderr, JSON: f.mode == "json"})
}

// resumePick handles -r: on a terminal it lists this directory's sessions
// and sets o.Path to the one picked; otherwise it prints the list and
// fails with exitUsage. ok false means return code now.
func resumePick(f *agentFlags, o *conversation.SessionOptions, stdin io.Reader, lines *bufio.Scanner, stdout, stderr io.Writer) (code int, ok bool) {
	infos, err := conversation.ListSessions("", f.cwd, *o)
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

// isTerminal reports whether r is a terminal (not /dev/null, a pipe or a
// closed descriptor).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && textmode.IsTerminal(f)
}
