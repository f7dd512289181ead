// Package llm owns the model side of the loop: the streaming Provider
// interface and its message types, the OpenAI-compatible provider on
// go-openai, and the scripted provider that plays recorded turns offline.
package llm

import (
	"context"
	"encoding/json"

	"github.com/pi-go/pi/runtime/content"
)

// Role of a message in the conversation.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleToolResult is a tool's answer to one tool call (a `tool` message on
	// the OpenAI wire).
	RoleToolResult Role = "toolResult"
)

// Message is one entry of the conversation. User and assistant messages carry
// Content; an assistant message may carry ToolCalls; a toolResult message
// answers the call ToolCallID of tool ToolName.
type Message struct {
	Role       Role            `json:"role"`
	Content    []content.Block `json:"content"`
	ToolCalls  []ToolCall      `json:"toolCalls,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
	// Details of a tool result (never sent to the model).
	Details any `json:"details,omitempty"`
}

// ToolCall is a call the model asked for. Arguments is the raw argument text
// the model produced (it may be invalid JSON; the loop reports that).
type ToolCall struct {
	ID        string       `json:"id"`
	Name      string       `json:"name"`
	Arguments RawArguments `json:"arguments"`
}

// RawArguments is a tool call's argument text as the provider assembled it,
// the bytes the tool pipeline validates and the tool decodes
// (json.RawMessage(args) shares them; nothing copies them on the way). It
// may be invalid JSON. In JSON it is a string, as the argument text of an
// event or a session always was.
type RawArguments []byte

// MarshalText returns the bytes themselves: encoding/json writes them as a
// JSON string, exactly as it writes a string holding them.
func (a RawArguments) MarshalText() ([]byte, error) { return a, nil }

// UnmarshalText keeps a copy of text (a JSON string's content).
func (a *RawArguments) UnmarshalText(text []byte) error {
	*a = append(RawArguments{}, text...)
	return nil
}

// String returns the argument text.
func (a RawArguments) String() string { return string(a) }

// ToolSpec is a tool as the model sees it.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model turn's input.
type Request struct {
	SystemPrompt string
	Messages     []Message
	Tools        []ToolSpec
}

// Usage counts tokens of one response.
type Usage struct {
	InputTokens  int `json:"input"`
	OutputTokens int `json:"output"`
	TotalTokens  int `json:"totalTokens"`
}

// StopReason says why the model stopped.
type StopReason string

const (
	StopEnd     StopReason = "stop"
	StopToolUse StopReason = "toolUse"
	StopLength  StopReason = "length"
	StopError   StopReason = "error"
	StopAborted StopReason = "aborted"
)

// StreamEventType names a streaming event.
type StreamEventType string

const (
	EventTextDelta     StreamEventType = "text_delta"
	EventToolCallStart StreamEventType = "toolcall_start"
	EventToolCallDelta StreamEventType = "toolcall_delta"
)

// StreamEvent is one piece of a streaming response.
type StreamEvent struct {
	Type StreamEventType `json:"type"`
	// Delta is the new text (text_delta) or the new argument text (toolcall_delta).
	Delta string `json:"delta,omitempty"`
	// ToolCallIndex, ToolCallID and ToolName identify the call being streamed.
	ToolCallIndex int    `json:"toolCallIndex,omitempty"`
	ToolCallID    string `json:"toolCallId,omitempty"`
	ToolName      string `json:"toolName,omitempty"`
}

// Response is a finished model turn: the assembled assistant message.
type Response struct {
	Message    Message
	Usage      Usage
	StopReason StopReason
}

// Provider streams one model turn. onEvent may be nil. Stream returns when
// the turn is complete, ctx is cancelled, or the provider failed.
//
// # Errors
//
// Errors say what to do: a rejected key names the environment variable it
// came from, an unknown model names the model, a refused connection names
// the URL.
type Provider interface {
	Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (*Response, error)
}
