package agent

import (
	"context"
)

// Continue runs the model on the conversation as it is, without a new
// prompt (an extension's message with triggerTurn, ABI 1.2): the last
// message should be a user-role one.
//
// # Errors
//
// As Run.
func (a *Agent) Continue(ctx context.Context) (*RunResult, error) {
	return a.run(ctx, nil, false)
}
