package abi

// This file declares the event types ABI 1.1 adds and the message_end
// event's params.

// Event types of ABI 1.1, sent only to guests that list them in
// InitResult.Events.
const (
	EventMessageEnd      = "message_end"
	EventSessionStart    = "session_start"
	EventSessionShutdown = "session_shutdown"
	EventCompactionStart = "compaction_start"
	EventCompactionEnd   = "compaction_end"
)

// DefaultEvents are the event types a guest with the "event" hook gets when
// its init names no Events: the six of ABI 1.0.
var DefaultEvents = []string{EventAgentStart, EventAgentEnd, EventTurnStart, EventTurnEnd, EventToolExecutionStart, EventToolExecutionEnd}

// IsEventType11 reports whether t is an event type a 1.1 guest may list in
// InitResult.Events: the six of 1.0 and those added in 1.1.
func IsEventType11(t string) bool {
	switch t {
	case EventMessageEnd, EventSessionStart, EventSessionShutdown, EventCompactionStart, EventCompactionEnd:
		return true
	case EventModelSelect:
		return true
	}
	return IsEventType(t)
}

// MessageEndEvent is the params of an event of type message_end (assistant
// messages only).
type MessageEndEvent struct {
	// Type is EventMessageEnd.
	Type string `json:"type"`
	// Message is the assistant's message.
	Message EventMessage `json:"message"`
}

// EventMessage is a message as events carry it.
type EventMessage struct {
	// Role is "assistant".
	Role string `json:"role"`
	// Content is the message's content; always present.
	Content []Block `json:"content"`
	// ToolCalls are the calls it asks for (omitted when none).
	ToolCalls []EventToolCall `json:"toolCalls,omitempty"`
}

// EventToolCall is one tool call of an EventMessage.
type EventToolCall struct {
	// ID identifies the call.
	ID string `json:"id"`
	// Name is the tool.
	Name string `json:"name"`
	// Arguments is the argument text the model produced.
	Arguments string `json:"arguments"`
}
