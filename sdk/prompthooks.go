package sdk

import (
	"errors"
	"strings"

	"github.com/pi-go/pi/internal/abi"
)

// Input is what an input hook sees: the text a person sent (as earlier
// hooks left it), its images and the mode.
type Input struct {
	Text   string
	Images []Block
	Mode   string
}

// InputAction is an input hook's answer; the zero value lets the prompt
// through unchanged. Build one with InputReplace or InputHandled.
type InputAction struct {
	// Replace replaces the prompt's text with Text.
	Replace bool
	Text    string
	// Handled keeps the prompt from the model; Message is shown to the
	// user.
	Handled bool
	Message string
}

// InputReplace returns an answer that replaces the prompt's text.
func InputReplace(text string) InputAction { return InputAction{Replace: true, Text: text} }

// InputHandled returns an answer that keeps the prompt from the model and
// shows message instead.
func InputHandled(message string) InputAction { return InputAction{Handled: true, Message: message} }

// OnInput registers an input hook: it sees every prompt a person sends
// (interactive, -p, RPC; not messages extensions make) before anything
// else does. Several hooks chain; after a handled answer the rest do not
// run. A hook that panics keeps the prompt from the model (fail closed).
func OnInput(fn func(Input) InputAction) { std.input = append(std.input, fn) }

// BeforeAgentStart is what a before_agent_start hook sees.
type BeforeAgentStart struct {
	Prompt       string
	SystemPrompt string
}

// AgentStartChange is a before_agent_start hook's answer; the zero value
// changes nothing.
type AgentStartChange struct {
	// SystemPrompt, when not empty, replaces the system prompt for this
	// prompt's run.
	SystemPrompt string
	// AppendSystemPrompt is added after it with a blank line.
	AppendSystemPrompt string
	// Messages are added as user-role context before the prompt, one
	// message each.
	Messages [][]Block
}

// OnBeforeAgentStart registers a before_agent_start hook: once per prompt,
// after the input hooks, it may replace or extend the system prompt and
// add context messages for that prompt's run.
func OnBeforeAgentStart(fn func(BeforeAgentStart) AgentStartChange) {
	std.beforeStart = append(std.beforeStart, fn)
}

// Stop is what a stop hook sees: the model ended a turn without tool calls
// and the run is about to end.
type Stop struct {
	Reason   string
	LastText string
	Turns    int
}

// StopDecision is a stop hook's answer; the zero value lets the run end.
type StopDecision struct {
	// Continue sends Message as a user message and the run goes on (at
	// most 3 times per prompt, over all extensions).
	Continue bool
	Message  string
}

// Continue returns a decision that keeps the run going with message.
func Continue(message string) StopDecision { return StopDecision{Continue: true, Message: message} }

// OnStop registers a stop hook. Several chain: the first that continues
// wins.
func OnStop(fn func(Stop) StopDecision) { std.stop = append(std.stop, fn) }

// hookInput runs the input hooks.
func (r *registry) hookInput(p *abi.InputParams) (any, error) {
	in := Input{Text: p.Text, Images: blocksFromABI(p.Images), Mode: p.Mode}
	replaced := false
	for _, fn := range r.input {
		a := fn(in)
		if a.Handled {
			return abi.InputResult{Handled: true, Message: a.Message}, nil
		}
		if a.Replace {
			in.Text, replaced = a.Text, true
		}
	}
	if replaced {
		t := in.Text
		return abi.InputResult{Text: &t}, nil
	}
	return abi.InputResult{}, nil
}

// hookBeforeStart runs the before_agent_start hooks, chained: each sees
// the system prompt as the ones before it left it. The answer carries the
// last replacement as systemPrompt and what was appended after it as
// appendSystemPrompt.
func (r *registry) hookBeforeStart(p *abi.BeforeAgentStartParams) (any, error) {
	sys := p.SystemPrompt
	var out abi.BeforeAgentStartResult
	var appends []string
	for _, fn := range r.beforeStart {
		c := fn(BeforeAgentStart{Prompt: p.Prompt, SystemPrompt: sys})
		if c.SystemPrompt != "" {
			base := c.SystemPrompt
			sys, out.SystemPrompt, appends = base, &base, nil
		}
		if c.AppendSystemPrompt != "" {
			sys = strings.TrimRight(sys, "\n") + "\n\n" + c.AppendSystemPrompt
			appends = append(appends, c.AppendSystemPrompt)
		}
		for _, m := range c.Messages {
			out.Messages = append(out.Messages, abi.ContextMessage{Content: blocksToABI(m)})
		}
	}
	out.AppendSystemPrompt = strings.Join(appends, "\n\n")
	return out, nil
}

// hookStop runs the stop hooks until one continues.
func (r *registry) hookStop(p *abi.StopParams) (any, error) {
	for _, fn := range r.stop {
		d := fn(Stop{Reason: p.Reason, LastText: p.LastText, Turns: p.Turns})
		if d.Continue {
			if strings.TrimSpace(d.Message) == "" {
				return nil, errors.New("a stop hook continued without a message")
			}
			return abi.StopResult{Continue: true, Message: d.Message}, nil
		}
	}
	return abi.StopResult{}, nil
}
