package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pi-go/pi/internal/suggest"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/redact"
)

// commands are pi's subcommands and the subcommands each takes.
var commands = map[string][]string{
	"version": nil, "tool": {"call"}, "tools": {"list"}, "ext": {"install", "list", "remove"},
	"trust": nil, "untrust": nil, "permissions": {"check", "list"}, "sessions": {"list"},
	"models": nil, "demo": nil, "help": nil, "sandbox": {"check"}, "doctor": nil, "skills": {"list"},
	"fleet": {"submit", "worker", "status", "results", "cancel", "retry"},
}

// commandNames lists commands in a fixed order (for suggestions).
var commandNames = []string{"version", "tool", "tools", "ext", "trust", "untrust", "permissions", "sessions", "models", "sandbox", "doctor", "skills", "fleet", "demo", "help"}

// leadingFlags returns how many of args are flags that every command
// building the runtime takes (--cwd, --config, --log-level, --tools,
// --trust, -e, --yes) with their values, before the first other argument;
// ok is false when a different flag comes first (an agent flag such as -p:
// what follows is a prompt).
func leadingFlags(args []string) (n int, ok bool) {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	var c commonFlags
	c.register(fs)
	fs.Bool("yes", false, "")
	for n < len(args) {
		a := args[n]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			return n, true
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			return n, false
		}
		if bf, isBool := f.Value.(interface{ IsBoolFlag() bool }); hasValue || (isBool && bf.IsBoolFlag()) {
			n++
		} else {
			n += 2
		}
	}
	return n, true
}

// hoistCommand turns `pi FLAGS COMMAND ARGS` (common flags before a
// subcommand) into `pi COMMAND ARGS FLAGS`, so `pi --trust tool call ...`
// runs `pi tool call`, not a prompt; the flags go before a "--" in ARGS.
func hoistCommand(args []string) []string {
	n, ok := leadingFlags(args)
	if !ok || n == 0 || n >= len(args) {
		return args
	}
	if _, isCmd := commands[args[n]]; !isCmd {
		return args
	}
	rest := slices.Clone(args[n+1:])
	at := slices.Index(rest, "--")
	if at < 0 {
		at = len(rest)
	}
	out := append([]string{args[n]}, rest[:at]...)
	out = append(out, args[:n]...)
	return append(out, rest[at:]...)
}

// bareWord reports whether s looks like a mistyped subcommand: a lower-case
// letter, then lower-case letters and dashes.
func bareWord(s string) bool {
	for i, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || i > 0 && c == '-') {
			return false
		}
	}
	return s != ""
}

// unknownCommand reports a first word that looks like a mistyped
// subcommand (`pi tols list`) instead of sending it to the model: a bare
// lowercase word close to a command's name, or to a command whose
// subcommand follows. Only the words before any "--" and after the common
// flags count; a quoted prompt with spaces never does.
func unknownCommand(args []string, stderr io.Writer) (code int, bad bool) {
	n, ok := leadingFlags(args)
	if !ok || n >= len(args) || !bareWord(args[n]) {
		return 0, false
	}
	word, rest := args[n], args[n+1:]
	guess := suggest.Closest(word, commandNames)
	if guess == "" && len(rest) > 0 {
		// `pi tolz list`: further off, but the next word is a subcommand.
		for _, c := range commandNames {
			if slices.Contains(commands[c], rest[0]) && c[0] == word[0] && suggest.Distance(word, c) <= 2 {
				guess = c
				break
			}
		}
	}
	if guess == "" {
		return 0, false
	}
	if len(rest) > 0 && slices.Contains(commands[guess], rest[0]) {
		guess += " " + rest[0]
	}
	prompt := strings.Join(args[n:], " ")
	fmt.Fprintf(stderr, "pi: unknown command %q; did you mean 'pi %s'?\nTo send %q to the model as a prompt, write: pi -- %q\nRun 'pi --help' for the commands.\n", word, guess, prompt, prompt)
	return exitUsage, true
}

// cutDashDash splits args at the first "--": the words after it are
// prompts as they are (never flags, files or commands).
func cutDashDash(args []string) (head, literal []string) {
	if i := slices.Index(args, "--"); i >= 0 {
		return args[:i], args[i+1:]
	}
	return args, nil
}

// initialPrompts are the prompts of the command line, as the reference
// agent makes them: the first is what was piped on stdin, then the @file
// attachments (text inline, images as image blocks), then the first
// message, joined by blank lines; each further message is a prompt of its
// own, sent when the one before is answered. Piped stdin is read (to its
// end) unless pi is interactive. ok false means exit with code.
func initialPrompts(f *agentFlags, pos, literal []string, interactive bool, stdin io.Reader, stderr io.Writer) (prompts []conversation.Prompt, code int, ok bool) {
	var files, words []string
	for _, p := range pos {
		if strings.HasPrefix(p, "@") && len(p) > 1 {
			files = append(files, p[1:])
		} else {
			words = append(words, p)
		}
	}
	words = append(words, literal...)
	var parts []string
	if !interactive && !isTerminal(stdin) {
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "pi: read the prompt from stdin: %v\n", err)
			return nil, exitError, false
		}
		if s := strings.TrimSpace(string(b)); s != "" {
			parts = append(parts, s)
		}
	}
	text, images, err := conversation.AttachFiles(resolveCwd(f.cwd), files)
	if err != nil {
		return nil, usageError(stderr, "", "%v", err), false
	}
	if text != "" {
		parts = append(parts, strings.TrimRight(text, "\n"))
	}
	if len(words) > 0 {
		parts = append(parts, words[0])
		words = words[1:]
	}
	if len(parts) > 0 || len(images) > 0 {
		prompts = append(prompts, conversation.Prompt{Text: strings.Join(parts, "\n\n"), Images: images})
	}
	for _, w := range words {
		prompts = append(prompts, conversation.Prompt{Text: w})
	}
	if !interactive && len(prompts) == 0 {
		if isTerminal(stdin) {
			return nil, usageError(stderr, "", "-p needs a prompt: pi -p \"PROMPT\""), false
		}
		fmt.Fprintln(stderr, "pi: no prompt: pass one as an argument (pi -p \"PROMPT\") or on stdin.\nRun 'pi --help' for usage, or 'pi demo' for an offline demo.")
		return nil, exitUsage, false
	}
	return prompts, 0, true
}

// openFailed prints why app.Open failed (the key redacted) and returns the
// exit code.
func openFailed(stderr io.Writer, err error, apiKey string) int {
	fmt.Fprintf(stderr, "pi: %v\n", redact.New(apiKey).String(err.Error()))
	return exitError
}
