package abi

// This file declares the prompt hooks of ABI 1.1: hook.input,
// hook.before_agent_start and hook.stop.

// Methods of ABI 1.1's prompt hooks, called in the guest through pi_call.
const (
	MethodInput            = "hook.input"
	MethodBeforeAgentStart = "hook.before_agent_start"
	MethodStop             = "hook.stop"
)

// Hook names of ABI 1.1 a guest may list in InitResult.Hooks.
const (
	HookInput            = "input"
	HookBeforeAgentStart = "before_agent_start"
	HookStop             = "stop"
)

// InputParams are the params of hook.input: text a person (or an RPC
// client, or pi -p) sent, before anything else sees it.
type InputParams struct {
	// Text is the prompt as typed (as replaced by earlier input hooks).
	Text string `json:"text"`
	// Images are attached images; always present ([] for none).
	Images []Block `json:"images"`
	// Mode is the run's mode (a Mode constant).
	Mode string `json:"mode"`
}

// InputResult is hook.input's result: {} passes, Text replaces the prompt,
// Handled keeps it from the model (Message is shown to the user).
type InputResult struct {
	// Text replaces the prompt (a pointer: "" is a replacement; omitted
	// when unchanged).
	Text *string `json:"text,omitempty"`
	// Handled means the prompt does not reach the model (omitted when
	// false).
	Handled bool `json:"handled,omitempty"`
	// Message is shown to the user when Handled (omitted when empty).
	Message string `json:"message,omitempty"`
}

// BeforeAgentStartParams are the params of hook.before_agent_start, sent
// once per prompt, after the input hooks.
type BeforeAgentStartParams struct {
	// Prompt is the user's prompt as it goes to the model.
	Prompt string `json:"prompt"`
	// SystemPrompt is the system prompt as the hooks before this one left
	// it.
	SystemPrompt string `json:"systemPrompt"`
}

// ContextMessage is a user-role message a before_agent_start hook adds
// before the prompt.
type ContextMessage struct {
	// Content is the message's content; always present.
	Content []Block `json:"content"`
}

// BeforeAgentStartResult is hook.before_agent_start's result; every field
// is omitted when empty, and {} changes nothing.
type BeforeAgentStartResult struct {
	// SystemPrompt replaces the system prompt for this prompt's run.
	SystemPrompt *string `json:"systemPrompt,omitempty"`
	// AppendSystemPrompt is added after it, with a blank line between.
	AppendSystemPrompt string `json:"appendSystemPrompt,omitempty"`
	// Messages are added as user-role context before the prompt.
	Messages []ContextMessage `json:"messages,omitempty"`
}

// StopParams are the params of hook.stop: the model ended a turn without
// tool calls and the run is about to end.
type StopParams struct {
	// Reason is "end_turn".
	Reason string `json:"reason"`
	// LastText is the text of the model's last message.
	LastText string `json:"lastText"`
	// Turns counts the run's turns, continues included.
	Turns int `json:"turns"`
}

// StopReasonEndTurn is StopParams.Reason.
const StopReasonEndTurn = "end_turn"

// StopResult is hook.stop's result: {} lets the run end; Continue with
// Message sends Message as a user message and the loop goes on.
type StopResult struct {
	// Continue keeps the run going (omitted when false).
	Continue bool `json:"continue,omitempty"`
	// Message is required with Continue (omitted when empty).
	Message string `json:"message,omitempty"`
}
