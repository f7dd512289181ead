package sdk

import (
	"encoding/json"
	"strings"
)

// Block is one piece of a tool result: text, or an image carried as base64
// data with its MIME type.
type Block struct {
	Type     string `json:"type"` // "text" or "image"
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: "text", Text: s} }

// ImageBlock returns an image block from base64 data and a MIME type.
func ImageBlock(base64Data, mimeType string) Block {
	return Block{Type: "image", Data: base64Data, MimeType: mimeType}
}

var _ json.Marshaler = Block{}

// MarshalJSON writes a text block as {"type","text"} even when the text is
// empty, and an image block as {"type","data","mimeType"}.
func (b Block) MarshalJSON() ([]byte, error) {
	if b.Type == "image" {
		return json.Marshal(struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
		}{b.Type, b.Data, b.MimeType})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", b.Text})
}

// Result is what a tool returns. Details is free-form JSON for the UI and the
// event stream (never sent to the model). Terminate asks the agent loop to
// end the run after this batch of tool calls.
type Result struct {
	Content   []Block `json:"content"`
	Details   any     `json:"details,omitempty"`
	IsError   bool    `json:"isError,omitempty"`
	Terminate bool    `json:"terminate,omitempty"`
}

// Text returns a successful result with one text block.
func Text(s string) Result { return Result{Content: []Block{TextBlock(s)}} }

// ErrorText returns an error result (isError) with one text block: a mistake
// the model can fix. Returning a Go error from a tool has the same effect.
func ErrorText(s string) Result { return Result{Content: []Block{TextBlock(s)}, IsError: true} }

// ExecutionMode says whether a tool may run concurrently with the other tool
// calls of the same assistant message.
type ExecutionMode string

const (
	Parallel   ExecutionMode = "parallel"
	Sequential ExecutionMode = "sequential"
)

// ToolSpec describes a tool to the host and the model.
//
// Parameters is the JSON Schema (type object) of the tool's input: a Go value
// that marshals to it (map[string]any), a json.RawMessage, a []byte or a
// string holding the JSON. When nil, the schema is derived from the input
// struct of Tool: exported fields by their json names, fields without
// `omitempty` required, a `description:"..."` tag as the field's description,
// and no other properties allowed.
type ToolSpec struct {
	Name             string
	Label            string
	Description      string
	Parameters       any
	PromptSnippet    string
	PromptGuidelines []string
	ExecutionMode    ExecutionMode
}

// Grants are what the host granted the extension (or, from Wants, what it
// asks for): fs entries "ro:PATH"/"rw:PATH", exec command patterns and
// environment variable names.
type Grants struct {
	FS   []string `json:"fs"`
	Exec []string `json:"exec"`
	Env  []string `json:"env"`
	// HTTP are URL patterns for HTTP (ABI 1.1):
	// "https://api.example.com/v1/*".
	HTTP []string `json:"http,omitempty"`
	// Tools are names of tools for CallTool (ABI 1.1).
	Tools []string `json:"tools,omitempty"`
	// LLM allows Complete (llm.complete), Model SetModel and
	// SetThinkingLevel (ABI 1.2).
	LLM   bool `json:"llm,omitempty"`
	Model bool `json:"model,omitempty"`
}

// ToolCall is what a tool_call hook sees: a call about to run, after its
// arguments were validated.
type ToolCall struct {
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`
	// Paths are the absolute host paths the call will open, with every
	// symlink resolved (for a file not created yet: the real path of its
	// deepest existing parent joined with the rest), resolved by the host
	// exactly as the tool resolves its arguments ("~", a leading "@",
	// relative to the call's cwd). The built-in read, write, edit, ls, find
	// and grep report the file or folder they open; other tools report none
	// (empty). Match rules against these as well as against the arguments:
	// "~/.ssh/x", "a/../.env" and a symlink to .env all show their real
	// target here. Nil when an earlier OnToolCall function of this same
	// extension replaced Input (the host recomputes them for the next
	// extension's hooks).
	Paths []string `json:"paths"`
}

// DecodeInput decodes the call's arguments into v. Unknown fields are allowed
// (they belong to another tool's schema).
//
// # Errors
//
// DecodeInput fails when the arguments do not fit v.
func (c ToolCall) DecodeInput(v any) error { return json.Unmarshal(c.Input, v) }

// ToolCallDecision is a tool_call hook's answer. The zero value lets the call
// through; Block stops it with Reason (which the model sees); a non-nil Input
// replaces the arguments (the host validates them again); Ask (ABI 1.1, see
// the Ask function) asks the person before the call runs. Give one of them.
type ToolCallDecision struct {
	Block  bool
	Reason string
	Input  any
	Ask    string
}

// Deny returns a decision that blocks the call with a reason.
func Deny(reason string) ToolCallDecision { return ToolCallDecision{Block: true, Reason: reason} }

// ToolResult is what a tool_result hook sees: a finished call and its result.
type ToolResult struct {
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`
	Content    []Block         `json:"content"`
	Details    json.RawMessage `json:"details"`
	IsError    bool            `json:"isError"`
}

// Text returns the result's text blocks joined by newlines.
func (r ToolResult) Text() string {
	var parts []string
	for _, b := range r.Content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ResultPatch is a tool_result hook's answer. Nil fields keep the value;
// the zero value changes nothing.
type ResultPatch struct {
	Content []Block
	Details any
	IsError *bool
}

// BashSpawn is how the bash tool is about to start a command: the full
// command line, its directory and its environment. A bash_spawn hook returns
// it, changed or not.
type BashSpawn struct {
	Command string            `json:"command"`
	Cwd     string            `json:"cwd"`
	Env     map[string]string `json:"env"`
}

// Event is an agent event (agent_start, turn_end, tool_execution_start, ...)
// with its JSON as the host sent it.
type Event struct {
	Type string
	Raw  json.RawMessage
}

// Decode decodes the event's JSON into v.
//
// # Errors
//
// Decode fails when the JSON does not fit v.
func (e Event) Decode(v any) error { return json.Unmarshal(e.Raw, v) }

// Level is the level of a log line.
type Level int32

const (
	LevelTrace Level = iota
	LevelDebug
	LevelInfo
	LevelWarn
	LevelError
)
