package abi

// This file declares the slash commands of ABI 1.1: what init declares
// and command.execute.

// MethodCommand runs a slash command in the guest (pi_call).
const MethodCommand = "command.execute"

// CommandSpec declares one slash command in InitResult.Commands.
type CommandSpec struct {
	// Name is the command without its slash: [a-z][a-z0-9-]*.
	Name string `json:"name"`
	// Description is one line for /help.
	Description string `json:"description"`
	// ArgumentHint shows what the command takes ("<item>"), omitted when
	// empty.
	ArgumentHint string `json:"argumentHint,omitempty"`
}

// CommandParams are the params of command.execute: /NAME ARGS typed by the
// user.
type CommandParams struct {
	// Name is the command without its slash.
	Name string `json:"name"`
	// Args is the rest of the line after the name, trimmed.
	Args string `json:"args"`
}

// CommandResult is command.execute's result.
type CommandResult struct {
	// Text is shown to the user (omitted when empty).
	Text string `json:"text,omitempty"`
	// Prompt is sent to the model as the user's message (omitted when
	// empty).
	Prompt string `json:"prompt,omitempty"`
}
