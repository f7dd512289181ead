package conversation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/extspec"
	"github.com/pi-go/pi/runtime/skills"
	"github.com/pi-go/pi/runtime/tool"
)

// This file is what every front end does with a line a person typed (or a
// -p prompt, or an RPC prompt): the extensions' input hooks, then slash
// commands (pi's own when SubmitOptions.Builtins, then the extensions'),
// then the model.

// CommandInfo is one slash command as /help lists it.
type CommandInfo = app.CommandInfo

// Prompt is what a person sent.
type Prompt struct {
	// Text is the line as typed.
	Text string
	// Images are attached images; the input hooks see them and the model
	// gets them after the text.
	Images []tool.ContentBlock
}

// SubmitOptions say how Submit treats a prompt.
type SubmitOptions struct {
	// Interactive is true for a person at a prompt (interactive and RPC
	// modes): an unknown /x is answered "unknown command /x (see /help)"
	// instead of going to the model, and /exit and /quit end. Otherwise
	// (pi -p) an unknown /x goes to the model: it may be a path.
	Interactive bool
	// Builtins runs pi's own slash commands (/new, /resume, /tools, ...:
	// Commands) for a person at a prompt (the TUI, the line mode, -p).
	// Without it (RPC, whose protocol has commands of its own, as the
	// reference's) only the extensions' commands run, and /help.
	Builtins bool
	// Show receives text for the person, before anything goes to the
	// model: a handled input's message, a command's text, /help, an
	// unknown command. Nil drops it.
	Show func(text string)
	// Accepted, when set, is called once the prompt passed the input
	// hooks (before a command or the model runs): an error Submit returns
	// before it is a refusal of the prompt (RPC answers the prompt command
	// with it), one after it a failure of the run.
	Accepted func()
}

func (o SubmitOptions) accepted() {
	if o.Accepted != nil {
		o.Accepted()
	}
}

func (o SubmitOptions) show(s string) {
	if o.Show != nil && s != "" {
		o.Show(s)
	}
}

// Submitted says what became of a prompt.
type Submitted struct {
	// Result is the model's run, nil when nothing went to the model.
	Result *agent.RunResult
	// Command is the command that ran ("" for none), without the slash.
	Command string
	// Handled names the extension whose input hook kept the prompt from
	// the model ("" for none).
	Handled string
	// Exit is set for /exit and /quit in interactive mode.
	Exit bool
	// Switched: the command changed the session (/new, /resume, /fork)
	// or the model; Resumed: to a session that existed before.
	Switched, Resumed bool
	// Steered: a run an extension started (ABI 1.2 agent.sendUserMessage,
	// sendMessage with triggerTurn) was going on, so the prompt was
	// queued as steering for it instead of starting a run of its own.
	Steered bool
}

// Submit runs a prompt: the input hooks on the raw text (in load order; a
// failing hook keeps the prompt from the model and is the error); then a
// text that starts with /NAME of a known command runs the command — pi's
// own (Commands), else an extension's (its text is shown, its prompt goes
// to the model without input hooks); otherwise the text goes to the model.
// Abort cancels the run.
//
// # Errors
//
// An input hook that failed (the prompt was not sent); a command that
// failed; agent.ErrBusy while another run goes on; no model configured
// (only when the prompt goes to the model); the model run's error (with
// its Result).
func (c *Conversation) Submit(ctx context.Context, p Prompt, o SubmitOptions) (Submitted, error) {
	// The runs extensions ask for meanwhile (from an input hook, a
	// command) start once the prompt's own work (and run) is done.
	release := c.holdExtensionRuns()
	defer release()
	in, err := c.rt.Input(ctx, p.Text, p.Images)
	if err != nil {
		return Submitted{}, err
	}
	o.accepted()
	if in.Handled {
		o.show(in.Message)
		return Submitted{Handled: in.By}, nil
	}
	text := in.Text
	name, args, isCmd := ParseCommand(text)
	if !isCmd {
		return c.expandAndPrompt(ctx, text, p.Images)
	}
	if cmd, ok := findBuiltin(name); ok && (o.Builtins || name == "help") && (o.Interactive || !cmd.interactiveOnly) {
		sub := Submitted{Command: name}
		err := cmd.run(ctx, c, args, o, &sub)
		// A run an extension started just before (a timer's, a queued
		// sendUserMessage) holds the conversation: the command runs
		// once it ends, as a prompt waits for it (a person's own run
		// still answers "abort it first").
		for errors.Is(err, agent.ErrBusy) && c.waitExtensionRun(ctx) {
			sub = Submitted{Command: name}
			err = cmd.run(ctx, c, args, o, &sub)
		}
		return sub, err
	}
	res, err := c.rt.RunCommand(ctx, name, args)
	switch {
	case errors.Is(err, app.ErrUnknownCommand):
	case err != nil:
		return Submitted{Command: name}, err
	default:
		o.show(res.Text)
		if c.lifecycleAfterCommand() { // pi.shutdown (run12.go)
			return Submitted{Command: name, Exit: true}, nil
		}
		if res.Prompt == "" {
			return Submitted{Command: name}, nil
		}
		return c.prompt(ctx, res.Prompt, nil, Submitted{Command: name})
	}
	if _, ok := skills.FindTemplate(c.res().Templates, name); ok {
		return c.expandAndPrompt(ctx, text, p.Images)
	}
	if o.Interactive {
		o.show(fmt.Sprintf("unknown command /%s (see /help)", name))
		return Submitted{}, nil
	}
	return c.prompt(ctx, text, p.Images, Submitted{})
}

// prompt sends text, then the images, to the model as the user's message.
func (c *Conversation) prompt(ctx context.Context, text string, images []tool.ContentBlock, s Submitted) (Submitted, error) {
	ag, err := c.agent()
	if err != nil {
		return s, err
	}
	parent := ctx
	ctx, end, err := c.begin(parent, "prompt")
	for errors.Is(err, agent.ErrBusy) {
		// A run an extension started holds the conversation and the
		// front end has not seen it start (its agent_start) or end (it
		// is past its agent_end): the prompt steers it, as a prompt
		// typed during a run does, or waits for its end.
		steer, retry := c.extRunBusy(parent)
		if steer {
			ag.Steer(agent.UserMessage(text, images...))
			s.Steered = true
			return s, nil
		}
		if !retry {
			break
		}
		ctx, end, err = c.begin(parent, "prompt")
	}
	if err != nil {
		return s, err
	}
	defer end()
	c.flushNextTurn() // agent.sendMessage's nextTurn: before the prompt
	start := c.beforeTurn(ctx)
	res, err := ag.PromptMessage(ctx, agent.UserMessage(text, images...))
	c.afterTurn(ctx, start, text)
	s.Result = res
	return s, err
}

// Steer queues a message for the run going on, delivered after its current
// tool calls; FollowUp queues one for when the run would end. The input
// hooks see it first (one may keep it from the model: it is then not
// queued, and its message goes to o.Show); a slash command is not run.
//
// # Errors
//
// An input hook that failed; no model configured.
func (c *Conversation) Steer(ctx context.Context, p Prompt, o SubmitOptions) (Submitted, error) {
	return c.queue(ctx, p, o, false)
}

// FollowUp queues a message for when the run would end; see Steer.
func (c *Conversation) FollowUp(ctx context.Context, p Prompt, o SubmitOptions) (Submitted, error) {
	return c.queue(ctx, p, o, true)
}

func (c *Conversation) queue(ctx context.Context, p Prompt, o SubmitOptions, followUp bool) (Submitted, error) {
	in, err := c.rt.Input(ctx, p.Text, p.Images)
	if err != nil {
		return Submitted{}, err
	}
	if in.Handled {
		o.show(in.Message)
		return Submitted{Handled: in.By}, nil
	}
	ag, err := c.agent()
	if err != nil {
		return Submitted{}, err
	}
	text, _, err := c.expand(in.Text)
	if err != nil {
		return Submitted{}, err
	}
	m := agent.UserMessage(text, p.Images...)
	if followUp {
		ag.FollowUp(m)
	} else {
		ag.Steer(m)
	}
	return Submitted{}, nil
}

// ParseCommand splits a typed line "/name args": name must be a command
// name (extspec.ValidCommandName), args is the rest of the line after it,
// trimmed. A text that does not start so ("/tmp/x", "/ x", "hello") is no
// command. Front ends use it to tell their own commands from a prompt.
func ParseCommand(text string) (name, args string, ok bool) {
	rest, ok := strings.CutPrefix(text, "/")
	if !ok {
		return "", "", false
	}
	name = rest
	if i := strings.IndexAny(rest, " \t\r\n"); i >= 0 {
		name, args = rest[:i], rest[i:]
	}
	if !extspec.ValidCommandName(name) {
		return "", "", false
	}
	return name, strings.TrimSpace(args), true
}

// Commands lists the slash commands: pi's own, then the extensions' in
// load order, then the prompt templates and the skills (/skill:NAME).
func (c *Conversation) Commands() []CommandInfo {
	out := make([]CommandInfo, 0, len(builtins))
	for _, b := range builtins {
		out = append(out, CommandInfo{Name: b.name, Description: b.help, ArgumentHint: b.args})
	}
	out = append(out, c.rt.Commands()...)
	return append(out, c.resourceCommands()...)
}

// HelpText is what /help shows: every command with its description, the
// extension's name after an extension's, then !COMMAND and @PATH.
func (c *Conversation) HelpText() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, cmd := range c.Commands() {
		usage := "/" + cmd.Name
		if cmd.ArgumentHint != "" {
			usage += " " + cmd.ArgumentHint
		}
		desc := cmd.Description
		switch {
		case cmd.Extension != "":
			desc += " (extension " + cmd.Extension + ")"
		case cmd.Source == "prompt":
			desc += " (prompt template)"
		case cmd.Source == "skill":
			desc += " (skill)"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", usage, desc)
	}
	fmt.Fprintf(tw, "  %s\t%s\n", "!COMMAND", "run COMMAND in the shell (through the bash tool's hooks and permissions); its output joins the conversation")
	fmt.Fprintf(tw, "  %s\t%s\n", "@PATH", "attach a file to a prompt: text inline, images as images")
	tw.Flush()
	return strings.TrimRight(b.String(), "\n")
}
