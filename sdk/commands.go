package sdk

import (
	"fmt"

	"github.com/pi-go/pi/internal/abi"
)

// CommandSpec declares a slash command.
type CommandSpec struct {
	// Name is without the slash: [a-z][a-z0-9-]*.
	Name string
	// Description is one line for /help.
	Description string
	// ArgumentHint shows what it takes, such as "[item]".
	ArgumentHint string
}

// CommandResult is a command's answer: Text is shown to the user, Prompt
// (when not empty) is sent to the model as the user's message.
type CommandResult struct {
	Text   string
	Prompt string
}

// Command registers a slash command: /NAME ARGS typed by the user runs fn
// with ARGS (the rest of the line, trimmed) instead of going to the model.
// A returned error is shown to the user.
func Command(spec CommandSpec, fn func(args string) (CommandResult, error)) {
	std.addCommand(spec, fn)
}

// addCommand registers a command, or records why it cannot.
func (r *registry) addCommand(spec CommandSpec, fn func(string) (CommandResult, error)) {
	if !commandPattern(spec.Name) {
		r.fail("sdk.Command: name %q must match [a-z][a-z0-9-]* (without the slash)", spec.Name)
		return
	}
	for _, c := range r.commands {
		if c.spec.Name == spec.Name {
			r.fail("sdk.Command: command /%s registered twice", spec.Name)
			return
		}
	}
	r.commands = append(r.commands, &commandEntry{spec: spec, run: fn})
}

// commandPattern is extspec.ValidCommandName on the guest side (the SDK
// imports no host package): [a-z][a-z0-9-]*.
func commandPattern(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

type commandEntry struct {
	spec CommandSpec
	run  func(string) (CommandResult, error)
}

// command runs a command.
func (r *registry) command(p *abi.CommandParams) (any, error) {
	for _, c := range r.commands {
		if c.spec.Name == p.Name {
			res, err := c.run(p.Args)
			if err != nil {
				return nil, err
			}
			return abi.CommandResult{Text: res.Text, Prompt: res.Prompt}, nil
		}
	}
	return nil, fmt.Errorf("extension %q has no command /%s", r.name, p.Name)
}
