package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"
)

// Version is the session format version this package writes.
const Version = 3

// Entry types of format version 3.
const (
	TypeSession             = "session" // the header line
	TypeMessage             = "message"
	TypeModelChange         = "model_change"
	TypeThinkingLevelChange = "thinking_level_change"
	TypeCompaction          = "compaction"
	TypeBranchSummary       = "branch_summary"
	TypeCustom              = "custom"
	TypeCustomMessage       = "custom_message"
	TypeLabel               = "label"
	TypeSessionInfo         = "session_info"
)

// Message roles stored in message entries. User, assistant and toolResult
// are what the model saw; the others are the reference's own kinds, turned
// into user messages when sent (see ToLLM).
const (
	RoleUser              = "user"
	RoleAssistant         = "assistant"
	RoleToolResult        = "toolResult"
	RoleCustom            = "custom"
	RoleBashExecution     = "bashExecution"
	RoleBranchSummary     = "branchSummary"
	RoleCompactionSummary = "compactionSummary"
)

// Header is the first line of a session file.
type Header struct {
	Type      string `json:"type"`
	Version   int    `json:"version"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Cwd       string `json:"cwd"`
	// ParentSession is the file this session was forked from, if any.
	ParentSession string `json:"parentSession,omitempty"`
}

// Entry is one line after the header. Type, ID, ParentID ("" for the first
// entry, null in the file) and Timestamp are set for every entry; the other
// fields belong to the types named in their comments (a message entry's
// message is Message's). An entry of a type this package does not know
// keeps only the common fields (and its line, for copying it on a fork).
// Entries are made by a Session (the zero Entry is not one); their fields
// are for reading.
//
// An entry read from a file keeps its line, not its decoded message:
// Message decodes it each time, and Info gives what a branch's sums need
// (role, token estimate, usage) from the first decode on. Sessions of
// 10k entries stay under twice their file's size in memory this way
// (docs/performance.md).
type Entry struct {
	Type      string
	ID        string
	ParentID  string
	Timestamp string

	// *entryFields holds the fields of the other types; message entries
	// share noFields (all zero), so reading, say, Summary of a message
	// entry gives "" as it always did.
	*entryFields

	// msg is a message built in this process (AppendMessage); nil for
	// one read from a file, which is line[msgStart:msgEnd] (msgEnd 0:
	// the whole line is decoded).
	msg              *Message
	msgStart, msgEnd uint32

	// info is the packed MessageInfo (see packInfo), 0 until the first
	// decode; usage is its Usage.
	info  atomic.Uint64
	usage atomic.Pointer[Usage]

	// line is the entry's JSON: as written by this process, as read for
	// a message (decoded when used) or for a fork. A session in memory
	// keeps none for the entries it appends (the message is there; a
	// 20 MB tool call need not be there twice): flush encodes them.
	line []byte
}

// entryFields are the fields of every entry type but message, kept apart
// so that a message entry (most of a session) does not carry them.
type entryFields struct {
	// model_change
	Provider, ModelID string
	// thinking_level_change
	ThinkingLevel string
	// compaction, branch_summary
	Summary string
	// compaction
	FirstKeptEntryID string
	TokensBefore     int
	// branch_summary
	FromID string
	// compaction, branch_summary: implementation data ({readFiles,
	// modifiedFiles} for pi's and the reference's own); custom_message:
	// extension data not sent to the model.
	Details json.RawMessage
	// compaction, branch_summary: made by an extension.
	FromHook bool
	// custom, custom_message
	CustomType string
	// custom: the extension's state.
	Data json.RawMessage
	// custom_message: a string or content blocks, sent as a user message.
	Content json.RawMessage
	// custom_message: shown in the reference's TUI.
	Display bool
	// label: the entry labelled, and the label ("" clears it).
	TargetID, Label string
	// session_info: the session's display name.
	Name string
}

// noFields is the entryFields of every message entry: never written.
var noFields = &entryFields{}

// newMessageEntry is a message entry of m (built in this process).
func newMessageEntry(m *Message) *Entry {
	return &Entry{Type: TypeMessage, entryFields: noFields, msg: m}
}

// Message returns the message of a message entry: the one appended in
// this process, or a new decode of its line for one read from a file (the
// session does not keep decoded messages; see Info for what sums over a
// branch need). An error when the entry is not a message or its message
// cannot be decoded (BuildContext then skips it). The message is for
// reading: it may share its strings with the file's bytes.
func (e *Entry) Message() (*Message, error) {
	if e.Type != TypeMessage {
		return nil, fmt.Errorf("entry %s: a %s entry has no message", e.ID, e.Type)
	}
	if e.msg != nil {
		e.noteInfo(e.msg, false)
		return e.msg, nil
	}
	m := new(Message)
	if err := e.decodeMessage(m); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeMessage decodes the message of e, a message entry read from a
// file, into m (zero), and notes its info.
func (e *Entry) decodeMessage(m *Message) error {
	if e.msgEnd == 0 {
		full, err := decodeEntry(e.line)
		if err != nil {
			e.info.Store(infoComputed)
			return fmt.Errorf("entry %s: %w", e.ID, err)
		}
		*m = *full.msg
		e.noteInfo(m, false)
		return nil
	}
	fast, err := m.decodeAt(e.line[e.msgStart:e.msgEnd:e.msgEnd], e.info.Load()&infoFast != 0)
	if err != nil {
		e.info.Store(infoComputed)
		return fmt.Errorf("entry %s: message: %w", e.ID, err)
	}
	e.noteInfo(m, fast)
	return nil
}

// loadEntry indexes one entry line: a message is only scanned for its
// type, id, parent and timestamp and decoded when used; other entries
// (small and few) are decoded at once.
func loadEntry(line []byte) (*Entry, error) {
	h, err := scanHead(line, true)
	if err != nil {
		return nil, err
	}
	if !h.hasID {
		return nil, errNoID
	}
	if h.typ != TypeMessage {
		e, err := decodeEntry(line)
		if err != nil {
			return nil, err
		}
		e.line = line
		return e, nil
	}
	e := &Entry{Type: TypeMessage, ID: h.id, ParentID: h.parentID, Timestamp: h.timestamp, entryFields: noFields, line: line}
	if len(h.message) > 0 && len(line) <= math.MaxUint32 {
		// h.message is a slice of line: its place in it.
		start := cap(line) - cap(h.message)
		e.msgStart, e.msgEnd = uint32(start), uint32(start+len(h.message))
	}
	if h.tsNumeric {
		e.Timestamp = isoTime(time.UnixMilli(int64(h.tsMillis)))
	}
	return e, nil
}

// Time parses Timestamp; the zero time when it cannot be parsed.
func (e *Entry) Time() time.Time {
	t, err := time.Parse(time.RFC3339Nano, e.Timestamp)
	if err != nil {
		return time.Time{}
	}
	return t
}

// entryJSON is every field an entry line may have, for decoding.
type entryJSON struct {
	Type             string          `json:"type"`
	ID               *string         `json:"id"`
	ParentID         *string         `json:"parentId"`
	Timestamp        any             `json:"timestamp"`
	Message          json.RawMessage `json:"message"`
	Provider         string          `json:"provider"`
	ModelID          string          `json:"modelId"`
	ThinkingLevel    string          `json:"thinkingLevel"`
	Summary          string          `json:"summary"`
	FirstKeptEntryID string          `json:"firstKeptEntryId"`
	TokensBefore     float64         `json:"tokensBefore"`
	FromID           string          `json:"fromId"`
	Details          json.RawMessage `json:"details"`
	FromHook         bool            `json:"fromHook"`
	CustomType       string          `json:"customType"`
	Data             json.RawMessage `json:"data"`
	Content          json.RawMessage `json:"content"`
	Display          bool            `json:"display"`
	TargetID         string          `json:"targetId"`
	Label            *string         `json:"label"`
	Name             *string         `json:"name"`
}

// errNoID is returned for an entry line without a string id.
var errNoID = errors.New("entry has no id")

// decodeEntry decodes one entry line (not the header).
func decodeEntry(line []byte) (*Entry, error) {
	var j entryJSON
	if err := json.Unmarshal(line, &j); err != nil {
		return nil, err
	}
	if j.ID == nil {
		return nil, errNoID
	}
	e := &Entry{Type: j.Type, ID: *j.ID, entryFields: &entryFields{
		Provider: j.Provider, ModelID: j.ModelID, ThinkingLevel: j.ThinkingLevel,
		Summary: j.Summary, FirstKeptEntryID: j.FirstKeptEntryID, TokensBefore: int(j.TokensBefore),
		FromID: j.FromID, Details: j.Details, FromHook: j.FromHook,
		CustomType: j.CustomType, Data: j.Data, Content: j.Content, Display: j.Display,
		TargetID: j.TargetID,
	}}
	if j.ParentID != nil {
		e.ParentID = *j.ParentID
	}
	switch ts := j.Timestamp.(type) {
	case string:
		e.Timestamp = ts
	case float64: // some versions wrote Unix milliseconds
		e.Timestamp = isoTime(time.UnixMilli(int64(ts)))
	}
	if j.Label != nil {
		e.Label = *j.Label
	}
	if j.Name != nil {
		e.Name = *j.Name
	}
	if e.Type == TypeMessage {
		if len(j.Message) == 0 || string(j.Message) == "null" {
			return nil, errors.New("message entry has no message")
		}
		var m Message
		if err := m.decode(j.Message); err != nil {
			return nil, fmt.Errorf("message: %w", err)
		}
		e.msg = &m
		e.entryFields = noFields
	}
	return e, nil
}

// encode writes the entry's line in the reference's field order.
func (e *Entry) encode() ([]byte, error) {
	var parent *string
	if e.ParentID != "" {
		p := e.ParentID
		parent = &p
	}
	var v any
	switch e.Type {
	case TypeMessage:
		m, err := e.Message()
		if err != nil {
			return nil, err
		}
		// A message read from a file is written as it was read.
		var shape any = m.raw
		if m.raw == nil {
			if shape, err = m.shape(); err != nil {
				return nil, fmt.Errorf("entry %s: %w", e.ID, err)
			}
		}
		v = struct {
			Type      string  `json:"type"`
			ID        string  `json:"id"`
			ParentID  *string `json:"parentId"`
			Timestamp string  `json:"timestamp"`
			Message   any     `json:"message"`
		}{e.Type, e.ID, parent, e.Timestamp, shape}
	case TypeModelChange:
		v = struct {
			Type      string  `json:"type"`
			ID        string  `json:"id"`
			ParentID  *string `json:"parentId"`
			Timestamp string  `json:"timestamp"`
			Provider  string  `json:"provider"`
			ModelID   string  `json:"modelId"`
		}{e.Type, e.ID, parent, e.Timestamp, e.Provider, e.ModelID}
	case TypeThinkingLevelChange:
		v = struct {
			Type          string  `json:"type"`
			ID            string  `json:"id"`
			ParentID      *string `json:"parentId"`
			Timestamp     string  `json:"timestamp"`
			ThinkingLevel string  `json:"thinkingLevel"`
		}{e.Type, e.ID, parent, e.Timestamp, e.ThinkingLevel}
	case TypeCompaction:
		v = struct {
			Type             string          `json:"type"`
			ID               string          `json:"id"`
			ParentID         *string         `json:"parentId"`
			Timestamp        string          `json:"timestamp"`
			Summary          string          `json:"summary"`
			FirstKeptEntryID string          `json:"firstKeptEntryId"`
			TokensBefore     int             `json:"tokensBefore"`
			Details          json.RawMessage `json:"details,omitempty"`
			FromHook         bool            `json:"fromHook,omitempty"`
		}{e.Type, e.ID, parent, e.Timestamp, e.Summary, e.FirstKeptEntryID, e.TokensBefore, e.Details, e.FromHook}
	case TypeCustom:
		data := e.Data
		if len(data) == 0 {
			data = json.RawMessage("null")
		}
		v = struct {
			Type       string          `json:"type"`
			CustomType string          `json:"customType"`
			Data       json.RawMessage `json:"data"`
			ID         string          `json:"id"`
			ParentID   *string         `json:"parentId"`
			Timestamp  string          `json:"timestamp"`
		}{e.Type, e.CustomType, data, e.ID, parent, e.Timestamp}
	case TypeLabel:
		v = struct {
			Type      string  `json:"type"`
			ID        string  `json:"id"`
			ParentID  *string `json:"parentId"`
			Timestamp string  `json:"timestamp"`
			TargetID  string  `json:"targetId"`
			Label     string  `json:"label,omitempty"` // cleared: none, as the reference's undefined
		}{e.Type, e.ID, parent, e.Timestamp, e.TargetID, e.Label}
	case TypeBranchSummary:
		v = struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			ParentID  *string         `json:"parentId"`
			Timestamp string          `json:"timestamp"`
			FromID    string          `json:"fromId"`
			Summary   string          `json:"summary"`
			Details   json.RawMessage `json:"details,omitempty"`
			FromHook  bool            `json:"fromHook,omitempty"`
		}{e.Type, e.ID, parent, e.Timestamp, e.FromID, e.Summary, e.Details, e.FromHook}
	case TypeSessionInfo:
		v = struct {
			Type      string  `json:"type"`
			ID        string  `json:"id"`
			ParentID  *string `json:"parentId"`
			Timestamp string  `json:"timestamp"`
			Name      string  `json:"name"`
		}{e.Type, e.ID, parent, e.Timestamp, e.Name}
	case TypeCustomMessage:
		v = struct {
			Type       string          `json:"type"`
			ID         string          `json:"id"`
			ParentID   *string         `json:"parentId"`
			Timestamp  string          `json:"timestamp"`
			CustomType string          `json:"customType"`
			Content    json.RawMessage `json:"content"`
			Display    bool            `json:"display"`
			Details    json.RawMessage `json:"details,omitempty"`
		}{e.Type, e.ID, parent, e.Timestamp, e.CustomType, e.Content, e.Display, e.Details}
	default:
		return nil, fmt.Errorf("entry %s: pi does not write %q entries", e.ID, e.Type)
	}
	b, err := marshal(v)
	if err != nil {
		return nil, fmt.Errorf("entry %s: %w", e.ID, err)
	}
	return b, nil
}

// marshal is json.Marshal without HTML escaping, as JSON.stringify writes
// ("<", ">" and "&" stay themselves).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Message is a message entry's message, in the reference's shapes: user,
// assistant and toolResult as the model saw them, and the reference's own
// roles (custom, bashExecution, branchSummary, compactionSummary).
//
// A message read from JSON (a session file, UnmarshalJSON) keeps the JSON
// it was read from and MarshalJSON writes that back: a string content stays
// a string, a usage without totalTokens gets none, and fields pi does not
// know (thinkingSignature, partialJson, a newer version's fields) are kept.
// Its fields are for reading: a changed message is built anew (a Message
// literal), never by changing the fields of one that was read.
type Message struct {
	Role string
	// Content blocks (a user or custom message written as a plain string
	// is read as one text block).
	Content []Block
	// Timestamp is Unix milliseconds.
	Timestamp int64

	// assistant
	API, Provider, Model string
	Usage                *Usage
	StopReason           string
	ErrorMessage         string

	// toolResult
	ToolCallID, ToolName string
	Details              json.RawMessage
	IsError              bool

	// custom
	CustomType string
	Display    bool

	// bashExecution
	Command            string
	Output             string
	ExitCode           *int
	Cancelled          bool
	Truncated          bool
	FullOutputPath     string
	ExcludeFromContext bool

	// branchSummary, compactionSummary
	Summary      string
	FromID       string
	TokensBefore int

	// raw is the JSON the message was read from; nil for a message pi
	// built. encoding/json compacts what MarshalJSON returns.
	raw json.RawMessage
}

// Block is one content block: text, image (base64 Data and MimeType),
// thinking (with the provider's ThinkingSignature, and Redacted for
// thinking sent encrypted only), or toolCall (ID, Name, the parsed
// Arguments object and Gemini's ThoughtSignature).
type Block struct {
	Type              string          `json:"type"`
	Text              string          `json:"text"`
	Thinking          string          `json:"thinking"`
	ThinkingSignature string          `json:"thinkingSignature"`
	Redacted          bool            `json:"redacted"`
	Data              string          `json:"data"`
	MimeType          string          `json:"mimeType"`
	ID                string          `json:"id"`
	Name              string          `json:"name"`
	Arguments         json.RawMessage `json:"arguments"`
	ThoughtSignature  string          `json:"thoughtSignature"`
}

// Usage is an assistant message's token usage, in the reference's shape.
type Usage struct {
	Input       int       `json:"input"`
	Output      int       `json:"output"`
	CacheRead   int       `json:"cacheRead"`
	CacheWrite  int       `json:"cacheWrite"`
	TotalTokens int       `json:"totalTokens"`
	Cost        UsageCost `json:"cost"`
}

// UsageCost is the cost of a response in US dollars (llm.Cost's
// shape), from the model's prices.
type UsageCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// ContextTokens is the reference's context size of a response: totalTokens,
// else the sum of its parts.
func (u Usage) ContextTokens() int {
	if u.TotalTokens > 0 {
		return u.TotalTokens
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

type messageJSON struct {
	Role string `json:"role"`
	// Content is a string or blocks in the file; decodeEntry and
	// UnmarshalJSON read the string form into one text block.
	Content            []Block         `json:"content"`
	Timestamp          float64         `json:"timestamp"`
	API                string          `json:"api"`
	Provider           string          `json:"provider"`
	Model              string          `json:"model"`
	Usage              *Usage          `json:"usage"`
	StopReason         string          `json:"stopReason"`
	ErrorMessage       string          `json:"errorMessage"`
	ToolCallID         string          `json:"toolCallId"`
	ToolName           string          `json:"toolName"`
	Details            json.RawMessage `json:"details"`
	IsError            bool            `json:"isError"`
	CustomType         string          `json:"customType"`
	Display            bool            `json:"display"`
	Command            string          `json:"command"`
	Output             string          `json:"output"`
	ExitCode           *int            `json:"exitCode"`
	Cancelled          bool            `json:"cancelled"`
	Truncated          bool            `json:"truncated"`
	FullOutputPath     string          `json:"fullOutputPath"`
	ExcludeFromContext bool            `json:"excludeFromContext"`
	Summary            string          `json:"summary"`
	FromID             string          `json:"fromId"`
	TokensBefore       float64         `json:"tokensBefore"`
}

// UnmarshalJSON reads any of the reference's message shapes, keeping a
// copy of b for MarshalJSON.
func (m *Message) UnmarshalJSON(b []byte) error {
	return m.decode(bytes.Clone(b))
}

// decode reads a message from b and keeps b (not copied) for MarshalJSON;
// the common shapes are read by decodeFast, whose strings are views of b
// (b must never change), anything else by encoding/json.
func (m *Message) decode(b []byte) error {
	_, err := m.decodeAt(b, false)
	return err
}

// decodeAt is decode into m (zero); fast says the fast path read it, and
// valid that b is known to be valid JSON (read on the fast path before).
func (m *Message) decodeAt(b []byte, valid bool) (fast bool, err error) {
	if m.decodeFast(b, valid) {
		m.raw = b[:len(b):len(b)]
		return true, nil
	}
	return false, m.decodeSlow(b)
}

// decodeSlow is decode through encoding/json.
func (m *Message) decodeSlow(b []byte) error {
	var j messageJSON
	if err := json.Unmarshal(b, &j); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) || te.Field != "content" {
			return err
		}
		var slow struct {
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(b, &slow); err != nil {
			return err
		}
		if j.Content, err = decodeContent(slow.Content); err != nil {
			return fmt.Errorf("content: %w", err)
		}
	}
	out, err := j.message()
	if err != nil {
		return err
	}
	out.raw = b[:len(b):len(b)]
	*m = out
	return nil
}

// message converts the decoded fields.
func (j *messageJSON) message() (Message, error) {
	return Message{
		Role: j.Role, Content: j.Content, Timestamp: int64(j.Timestamp),
		API: j.API, Provider: j.Provider, Model: j.Model, Usage: j.Usage,
		StopReason: j.StopReason, ErrorMessage: j.ErrorMessage,
		ToolCallID: j.ToolCallID, ToolName: j.ToolName, Details: j.Details, IsError: j.IsError,
		CustomType: j.CustomType, Display: j.Display,
		Command: j.Command, Output: j.Output, ExitCode: j.ExitCode, Cancelled: j.Cancelled,
		Truncated: j.Truncated, FullOutputPath: j.FullOutputPath, ExcludeFromContext: j.ExcludeFromContext,
		Summary: j.Summary, FromID: j.FromID, TokensBefore: int(j.TokensBefore),
	}, nil
}

// decodeContent reads content that is a string, an array of blocks, or
// absent.
func decodeContent(raw json.RawMessage) ([]Block, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []Block{{Type: "text", Text: s}}, nil
	}
	var blocks []Block
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	return blocks, nil
}

// MarshalJSON writes a message read from JSON as it was read; one pi
// built in the reference's shape for its role: user, assistant, toolResult,
// bashExecution (what a person ran, the RPC bash command and the TUI's
// !cmd), and, for listing a context (RPC get_messages), custom,
// compactionSummary and branchSummary.
func (m *Message) MarshalJSON() ([]byte, error) {
	if m.raw != nil {
		return m.raw, nil
	}
	v, err := m.shape()
	if err != nil {
		return nil, err
	}
	return marshal(v)
}

// shape is the value MarshalJSON encodes: the message as a struct of the
// reference's fields for its role, its blocks as their shapes. An entry's
// line encodes it in the same pass as the entry (no Marshaler between
// them), so a 20 MB tool call is copied into the line once, not once per
// level.
func (m *Message) shape() (any, error) {
	content := blockShapes(m.Content)
	switch m.Role {
	case RoleUser:
		return struct {
			Role      string `json:"role"`
			Content   []any  `json:"content"`
			Timestamp int64  `json:"timestamp"`
		}{m.Role, content, m.Timestamp}, nil
	case RoleAssistant:
		usage := m.Usage
		if usage == nil {
			usage = &Usage{}
		}
		return struct {
			Role         string `json:"role"`
			Content      []any  `json:"content"`
			API          string `json:"api"`
			Provider     string `json:"provider"`
			Model        string `json:"model"`
			Usage        *Usage `json:"usage"`
			StopReason   string `json:"stopReason"`
			ErrorMessage string `json:"errorMessage,omitempty"`
			Timestamp    int64  `json:"timestamp"`
		}{m.Role, content, m.API, m.Provider, m.Model, usage, m.StopReason, m.ErrorMessage, m.Timestamp}, nil
	case RoleToolResult:
		return struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"toolCallId"`
			ToolName   string          `json:"toolName"`
			Content    []any           `json:"content"`
			Details    json.RawMessage `json:"details,omitempty"`
			IsError    bool            `json:"isError"`
			Timestamp  int64           `json:"timestamp"`
		}{m.Role, m.ToolCallID, m.ToolName, content, m.Details, m.IsError, m.Timestamp}, nil
	case RoleBashExecution:
		return struct {
			Role               string  `json:"role"`
			Command            string  `json:"command"`
			Output             string  `json:"output"`
			ExitCode           *int    `json:"exitCode"`
			Cancelled          bool    `json:"cancelled"`
			Truncated          bool    `json:"truncated"`
			FullOutputPath     *string `json:"fullOutputPath,omitempty"`
			ExcludeFromContext bool    `json:"excludeFromContext,omitempty"`
			Timestamp          int64   `json:"timestamp"`
		}{m.Role, m.Command, m.Output, m.ExitCode, m.Cancelled, m.Truncated, optString(m.FullOutputPath), m.ExcludeFromContext, m.Timestamp}, nil
	case RoleCustom:
		return struct {
			Role       string          `json:"role"`
			CustomType string          `json:"customType"`
			Content    []any           `json:"content"`
			Display    bool            `json:"display"`
			Details    json.RawMessage `json:"details,omitempty"`
			Timestamp  int64           `json:"timestamp"`
		}{m.Role, m.CustomType, content, m.Display, m.Details, m.Timestamp}, nil
	case RoleCompactionSummary:
		return struct {
			Role         string `json:"role"`
			Summary      string `json:"summary"`
			TokensBefore int    `json:"tokensBefore"`
			Timestamp    int64  `json:"timestamp"`
		}{m.Role, m.Summary, m.TokensBefore, m.Timestamp}, nil
	case RoleBranchSummary:
		return struct {
			Role      string `json:"role"`
			Summary   string `json:"summary"`
			FromID    string `json:"fromId"`
			Timestamp int64  `json:"timestamp"`
		}{m.Role, m.Summary, m.FromID, m.Timestamp}, nil
	}
	return nil, fmt.Errorf("pi does not write %q messages", m.Role)
}

// optString is nil for "" (a field the reference leaves out).
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// MarshalJSON writes the block in the reference's shape for its type.
func (b Block) MarshalJSON() ([]byte, error) { return marshal(b.shape()) }

// blockShapes returns the shapes of blocks ([] for none).
func blockShapes(blocks []Block) []any {
	out := make([]any, len(blocks))
	for i, b := range blocks {
		out[i] = b.shape()
	}
	return out
}

// shape is the value MarshalJSON encodes (see Message.shape).
func (b Block) shape() any {
	switch b.Type {
	case "image":
		return struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
		}{b.Type, b.Data, b.MimeType}
	case "thinking":
		return struct {
			Type      string `json:"type"`
			Thinking  string `json:"thinking"`
			Signature string `json:"thinkingSignature,omitempty"`
			Redacted  bool   `json:"redacted,omitempty"`
		}{b.Type, b.Thinking, b.ThinkingSignature, b.Redacted}
	case "toolCall":
		args := b.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		return struct {
			Type             string          `json:"type"`
			ID               string          `json:"id"`
			Name             string          `json:"name"`
			Arguments        json.RawMessage `json:"arguments"`
			ThoughtSignature string          `json:"thoughtSignature,omitempty"`
		}{b.Type, b.ID, b.Name, args, b.ThoughtSignature}
	}
	return struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{b.Type, b.Text}
}

// JoinTexts joins the text blocks of blocks with sep (images and other
// blocks are left out).
func JoinTexts(blocks []Block, sep string) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, sep)
}
