package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pi-go/pi/internal/abi"
)

// This file holds extensions' slash commands (ABI 1.1): the names they may
// not take, the clash check between extensions, listing and running them.

// BuiltinCommands are the names of pi's own slash commands; an extension
// command with one of these names is a load error.
var BuiltinCommands = []string{"help", "exit", "quit", "new", "resume", "session", "name", "fork", "compact", "model", "tools", "ext", "permissions"}

// commandClash refuses an extension whose command another loaded one has.
func commandClash(e *Extension, loaded []*Extension) error {
	for _, c := range e.info.Commands {
		for _, o := range loaded {
			for _, oc := range o.info.Commands {
				if oc.Name == c.Name {
					return fmt.Errorf("command /%s of extension %s clashes with command /%s of extension %s (%s)", c.Name, e.name, oc.Name, o.name, o.spec.Path)
				}
			}
		}
	}
	return nil
}

// Command is a slash command of a loaded extension.
type Command struct {
	CommandSpec
	// Extension is the name of the extension that offers it.
	Extension string
}

// Commands lists the slash commands of the loaded extensions, in load
// order.
func (h *Host) Commands() []Command {
	var out []Command
	for _, e := range h.Extensions() {
		for _, c := range e.info.Commands {
			out = append(out, Command{CommandSpec: c, Extension: e.info.Name})
		}
	}
	return out
}

// CommandResult is what a command answered.
type CommandResult struct {
	// Text is shown to the user; Prompt is sent to the model as the
	// user's message. Either may be empty.
	Text, Prompt string
}

// ErrUnknownCommand is returned (wrapped) by ExecuteCommand for a name no
// extension offers.
var ErrUnknownCommand = errors.New("unknown command")

// ExecuteCommand runs /name args in the extension that offers it, bounded
// by its limits.timeout_ms.
//
// # Errors
//
// ErrUnknownCommand; the extension's error answer or fault, with its
// name.
func (h *Host) ExecuteCommand(ctx context.Context, name, args string) (CommandResult, error) {
	for _, e := range h.Extensions() {
		for _, c := range e.info.Commands {
			if c.Name == name {
				return e.executeCommand(ctx, name, args)
			}
		}
	}
	return CommandResult{}, fmt.Errorf("%w /%s", ErrUnknownCommand, name)
}

func (e *Extension) executeCommand(ctx context.Context, name, args string) (CommandResult, error) {
	const method = abi.MethodCommand
	req, err := encodeRequest(method, commandParams(name, args))
	if err != nil {
		return CommandResult{}, err
	}
	var r commandAnswer
	err = e.call(ctx, method, req, e.execTO, nil, func(raw json.RawMessage) error {
		return decodeObject(raw, method, &r)
	})
	if err != nil {
		return CommandResult{}, e.hookError("/"+name, err)
	}
	return CommandResult{Text: r.Text, Prompt: r.Prompt}, nil
}
