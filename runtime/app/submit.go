package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/extspec"
	"github.com/pi-go/pi/runtime/tool"
)

// This file is what every front end does with a line a person typed (or a
// -p prompt, or an RPC prompt): the extensions' input hooks, then slash
// commands, then the model. A front end calls Runtime.Submit and renders.

// CommandInfo is one slash command as /help lists it.
type CommandInfo struct {
	// Name is without the slash.
	Name         string `json:"name"`
	Description  string `json:"description"`
	ArgumentHint string `json:"argumentHint,omitempty"`
	// Extension offers it; "" for a built-in command.
	Extension string `json:"extension,omitempty"`
}

// builtinCommands are the built-in commands Submit runs itself. The other
// names of extensions.BuiltinCommands are reserved for front ends.
var builtinCommands = []CommandInfo{
	{Name: "help", Description: "list the commands"},
	{Name: "exit", Description: "leave pi (interactive)"},
	{Name: "quit", Description: "leave pi (interactive)"},
}

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
	// Show receives text for the person, before anything goes to the
	// model: a handled input's message, a command's text, /help, an
	// unknown command. Nil drops it.
	Show func(text string)
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
}

// Submit runs a prompt: the input hooks on the raw text (in load order; a
// failing hook keeps the prompt from the model and is the error); then a
// text that starts with /NAME of a known command runs the command (its
// text is shown, its prompt goes to the model without input hooks);
// otherwise the text goes to the model through ag.Prompt.
//
// # Errors
//
// An input hook that failed (the prompt was not sent); a command that
// failed; the model run's error (with its Result).
func (r *Runtime) Submit(ctx context.Context, ag *agent.Agent, p Prompt, o SubmitOptions) (Submitted, error) {
	show := func(s string) {
		if o.Show != nil && s != "" {
			o.Show(s)
		}
	}
	text := p.Text
	if r.host != nil {
		in, err := r.host.Input(ctx, extensions.InputRequest{Text: text, Images: p.Images, Mode: r.mode()})
		if err != nil {
			return Submitted{}, err
		}
		if in.Handled {
			show(in.Message)
			return Submitted{Handled: in.By}, nil
		}
		text = in.Text
	}
	name, args, isCmd := ParseCommand(text)
	if !isCmd {
		return r.prompt(ctx, ag, text, p.Images, Submitted{})
	}
	switch name {
	case "help":
		show(r.HelpText())
		return Submitted{Command: name}, nil
	case "exit", "quit":
		if o.Interactive {
			return Submitted{Command: name, Exit: true}, nil
		}
	}
	if r.host != nil {
		res, err := r.host.ExecuteCommand(ctx, name, args)
		switch {
		case errors.Is(err, extensions.ErrUnknownCommand):
		case err != nil:
			return Submitted{Command: name}, err
		default:
			show(res.Text)
			if res.Prompt == "" {
				return Submitted{Command: name}, nil
			}
			return r.prompt(ctx, ag, res.Prompt, nil, Submitted{Command: name})
		}
	}
	if o.Interactive {
		show(fmt.Sprintf("unknown command /%s (see /help)", name))
		return Submitted{}, nil
	}
	return r.prompt(ctx, ag, text, p.Images, Submitted{})
}

// prompt sends text, then the images, to the model as the user's message.
func (r *Runtime) prompt(ctx context.Context, ag *agent.Agent, text string, images []tool.ContentBlock, s Submitted) (Submitted, error) {
	res, err := ag.PromptMessage(ctx, agent.UserMessage(text, images...))
	s.Result = res
	return s, err
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

// HelpText is what /help shows: every command with its description, the
// extension's name after an extension's.
func (r *Runtime) HelpText() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, c := range r.Commands() {
		usage := "/" + c.Name
		if c.ArgumentHint != "" {
			usage += " " + c.ArgumentHint
		}
		desc := c.Description
		if c.Extension != "" {
			desc += " (extension " + c.Extension + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", usage, desc)
	}
	tw.Flush()
	return strings.TrimRight(b.String(), "\n")
}
