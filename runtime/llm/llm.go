// Package llm owns the model side of the loop: the streaming Provider
// interface and its message types, the OpenAI-compatible provider on
// go-openai, and the scripted provider that plays recorded turns offline.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

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

	// API, Provider and Model name the model that wrote an assistant
	// message (the providers built by NewProvider set them). A provider
	// sends back the thinking, signatures and call ids of its own model's
	// messages unchanged; another model's thinking becomes text, its
	// redacted thinking and thought signatures are dropped and its call ids
	// are made valid for the API (the reference's rules). Empty means
	// unknown: treated as another model's.
	API      string `json:"api,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
}

// ToolCall is a call the model asked for. Arguments is the raw argument text
// the model produced (it may be invalid JSON; the loop reports that).
type ToolCall struct {
	ID        string       `json:"id"`
	Name      string       `json:"name"`
	Arguments RawArguments `json:"arguments"`
	// ThoughtSignature is Gemini's signature of the thinking that led to
	// the call, sent back with it (the reference's toolCall
	// thoughtSignature).
	ThoughtSignature string `json:"thoughtSignature,omitempty"`
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

// schema is the tool's JSON Schema as sent: an empty object schema
// when it has none.
func (t ToolSpec) schema() json.RawMessage {
	if len(bytes.TrimSpace(t.Parameters)) == 0 {
		return emptyParameters
	}
	return t.Parameters
}

// checkedSchema is schema, checked to be JSON (the native wires write
// it into the request as it is).
func (t ToolSpec) checkedSchema() (json.RawMessage, error) {
	params := t.schema()
	if !json.Valid(params) {
		return nil, fmt.Errorf("tool %q: parameters are not JSON", t.Name)
	}
	return params, nil
}

// Request is one model turn's input.
type Request struct {
	SystemPrompt string
	Messages     []Message
	Tools        []ToolSpec
	// Thinking is how hard a reasoning model should think; "" is
	// ThinkingOff. A provider maps it to its API (a budget, an effort) and
	// sends nothing for a model without reasoning.
	Thinking ThinkingLevel
	// MaxTokens, when above 0, is the most output tokens the answer may
	// have (an extension's llm.complete sets it); each provider sends it
	// as its API's output limit, never above the model's own.
	MaxTokens int
}

// outputLimit is the output limit a provider sends: the request's
// MaxTokens when set, capped by limit (the provider's own, 0 for none);
// else limit.
func (r Request) outputLimit(limit int) int {
	if r.MaxTokens > 0 && (limit <= 0 || r.MaxTokens < limit) {
		return r.MaxTokens
	}
	return limit
}

// askedLimit is the output limit of an API that sends none by default:
// 0 unless the request sets MaxTokens, then that capped by modelMax (the
// model's own, 0 when unknown).
func (r Request) askedLimit(modelMax int) int {
	if r.MaxTokens <= 0 {
		return 0
	}
	return r.outputLimit(modelMax)
}

// ThinkingLevel is how hard a reasoning model thinks, in the reference's
// names; each provider maps the levels to its API.
type ThinkingLevel string

const (
	ThinkingOff     ThinkingLevel = "off"
	ThinkingMinimal ThinkingLevel = "minimal"
	ThinkingLow     ThinkingLevel = "low"
	ThinkingMedium  ThinkingLevel = "medium"
	ThinkingHigh    ThinkingLevel = "high"
	ThinkingXHigh   ThinkingLevel = "xhigh"
)

// ThinkingLevels are the levels from the lowest to the highest.
var ThinkingLevels = []ThinkingLevel{ThinkingOff, ThinkingMinimal, ThinkingLow, ThinkingMedium, ThinkingHigh, ThinkingXHigh}

// Usage counts tokens of one response, in the reference's shape: Input
// excludes the tokens read from or written to the prompt cache.
type Usage struct {
	InputTokens      int `json:"input"`
	OutputTokens     int `json:"output"`
	CacheReadTokens  int `json:"cacheRead"`
	CacheWriteTokens int `json:"cacheWrite"`
	TotalTokens      int `json:"totalTokens"`
	// Cost is what the response cost in US dollars, from the model's
	// prices; zero when the prices are unknown.
	Cost Cost `json:"cost"`
}

// Cost is a response's cost in US dollars, in the reference's shape.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
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
	EventTextDelta StreamEventType = "text_delta"
	// EventThinkingDelta carries new reasoning text in Delta.
	EventThinkingDelta StreamEventType = "thinking_delta"
	// EventThinkingStart and EventThinkingEnd open and close a thinking
	// block (the reference's events). Providers send only deltas; the
	// agent's loop adds these around each run of thinking deltas, and
	// thinking_end carries the block's whole text in Content.
	EventThinkingStart StreamEventType = "thinking_start"
	EventThinkingEnd   StreamEventType = "thinking_end"
	EventToolCallStart StreamEventType = "toolcall_start"
	EventToolCallDelta StreamEventType = "toolcall_delta"
)

// StreamEvent is one piece of a streaming response.
type StreamEvent struct {
	Type StreamEventType `json:"type"`
	// ContentIndex is the place of the block in the assistant message's
	// content as the reference counts it (text, thinking and tool-call
	// blocks in the order they began); set by the agent's loop, nil from
	// a provider.
	ContentIndex *int `json:"contentIndex,omitempty"`
	// Delta is the new text (text_delta, thinking_delta) or the new
	// argument text (toolcall_delta).
	Delta string `json:"delta,omitempty"`
	// Content is a finished thinking block's whole text (thinking_end).
	Content string `json:"content,omitempty"`
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
