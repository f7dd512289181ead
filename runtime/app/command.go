package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-go/pi/extensions"
)

// CommandResult is what an extension's slash command answered: Text to show
// the person, Prompt to send to the model as their message (either may be
// empty).
type CommandResult = extensions.CommandResult

// ErrUnknownCommand is returned (wrapped) by RunCommand for a name no
// loaded extension offers.
var ErrUnknownCommand = extensions.ErrUnknownCommand

// RunCommand runs the extension slash command /name with args directly:
// no input hooks, no model (a front end that sends the Prompt on uses
// Submit). It is what test kits and scripts call.
//
// # Errors
//
// ErrUnknownCommand (naming the known commands) and the command's own
// failure or fault.
func (r *Runtime) RunCommand(ctx context.Context, name, args string) (CommandResult, error) {
	host := r.extHost()
	if host == nil {
		return CommandResult{}, fmt.Errorf("run command /%s: %w (no extension is loaded)", name, ErrUnknownCommand)
	}
	res, err := host.ExecuteCommand(ctx, name, args)
	if errors.Is(err, ErrUnknownCommand) {
		var known []string
		for _, c := range host.Commands() {
			known = append(known, "/"+c.Name)
		}
		return res, fmt.Errorf("run command /%s: %w (the extensions offer: %v)", name, err, known)
	}
	return res, err
}
