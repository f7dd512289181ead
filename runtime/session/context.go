package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/pi-go/pi/internal/jsonscan"
	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/llm"
)

// Texts the reference wraps summaries in when it sends them to the model
// (part of the context format: the same session gives the same request in
// both programs).
const (
	compactionSummaryPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	compactionSummarySuffix = "\n</summary>"
	branchSummaryPrefix     = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
	branchSummarySuffix     = "</summary>"
)

// InterruptedResultText is the text of the error result synthesized for a
// tool call that has no result (the run was killed while the tool ran).
const InterruptedResultText = "No result provided: the run ended before this tool call finished (pi was interrupted or killed). The call may have partly run; check its effects before repeating it."

// Context returns the messages of the current branch as the model is to
// see them (see BuildContext).
func (s *Session) Context() []Message {
	return BuildContext(s.Branch())
}

// BuildContext turns the path from the root to the leaf into the
// conversation, as the reference does: without a compaction on the path,
// every message, custom_message and branch_summary in order; with one (the
// last on the path counts), its summary first, then the entries from its
// firstKeptEntryId up to it, then the entries after it. custom, label,
// model_change, session_info and unknown entries contribute nothing.
// Messages that cannot be decoded are skipped.
func BuildContext(path []*Entry) []Message {
	comp, before, after := contextSpans(path)
	out := make([]Message, 0, len(before)+len(after)+1)
	if comp != nil {
		out = append(out, compactionSummary(comp))
	}
	for _, span := range [2][]*Entry{before, after} {
		for _, e := range span {
			if e.Type == TypeMessage && e.msg == nil {
				// Decoded in place: no copy of the message.
				out = append(out, Message{})
				if e.decodeMessage(&out[len(out)-1]) != nil {
					out = out[:len(out)-1]
				}
			} else if m, ok := e.ContextMessage(); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// contextSpans splits path by BuildContext's rule: without a compaction,
// all of it (after); with one (the last on the path), the compaction, the
// entries from its firstKeptEntryId up to it (before; none when that id
// is not before it) and the entries after it.
func contextSpans(path []*Entry) (comp *Entry, before, after []*Entry) {
	compIdx := -1
	for i, e := range path {
		if e.Type == TypeCompaction {
			compIdx = i
		}
	}
	if compIdx < 0 {
		return nil, nil, path
	}
	comp = path[compIdx]
	for i, e := range path[:compIdx] {
		if e.ID == comp.FirstKeptEntryID {
			before = path[i:compIdx]
			break
		}
	}
	return comp, before, path[compIdx+1:]
}

// compactionSummary is the message a compaction entry starts the context
// with.
func compactionSummary(comp *Entry) Message {
	return Message{Role: RoleCompactionSummary, Summary: comp.Summary, TokensBefore: comp.TokensBefore, Timestamp: comp.Time().UnixMilli()}
}

// ContextMessage returns the message e contributes to the conversation: a
// message entry's message (when it decodes), a custom_message as a custom
// message, a branch_summary with a summary as a branchSummary message; ok
// is false for every other entry (compaction, custom, label,
// model_change, session_info, unknown types).
func (e *Entry) ContextMessage() (m Message, ok bool) {
	switch e.Type {
	case TypeMessage:
		if e.msg != nil {
			e.noteInfo(e.msg, false)
			return *e.msg, true
		}
		var m Message
		if e.decodeMessage(&m) == nil {
			return m, true
		}
	case TypeCustomMessage:
		return customMessage(e), true
	case TypeBranchSummary:
		if e.Summary != "" {
			return Message{Role: RoleBranchSummary, Summary: e.Summary, FromID: e.FromID, Timestamp: e.Time().UnixMilli()}, true
		}
	}
	return Message{}, false
}

// UserContent returns the content a message of the reference's own roles
// is sent to the model as, in a user message: a custom message's content,
// a bashExecution as "Ran `CMD`" and its output, a branch or compaction
// summary wrapped in the reference's texts. ok is false for user,
// assistant and toolResult messages, and for a bashExecution excluded from
// the context.
func UserContent(m Message) (blocks []Block, ok bool) {
	text := func(s string) ([]Block, bool) { return []Block{{Type: "text", Text: s}}, true }
	switch m.Role {
	case RoleCustom:
		return m.Content, true
	case RoleBashExecution:
		if !m.ExcludeFromContext {
			return text(bashExecutionText(m))
		}
	case RoleBranchSummary:
		return text(branchSummaryPrefix + m.Summary + branchSummarySuffix)
	case RoleCompactionSummary:
		return text(compactionSummaryPrefix + m.Summary + compactionSummarySuffix)
	}
	return nil, false

}

// customMessage is a custom_message entry as the message the reference
// makes of it; its content is written back as the file holds it (a string
// stays a string).
func customMessage(e *Entry) Message {
	blocks, _ := decodeContent(e.Content)
	m := Message{Role: RoleCustom, CustomType: e.CustomType, Content: blocks, Display: e.Display, Details: e.Details, Timestamp: e.Time().UnixMilli()}
	if len(e.Content) > 0 {
		raw, err := marshal(struct {
			Role       string          `json:"role"`
			CustomType string          `json:"customType"`
			Content    json.RawMessage `json:"content"`
			Display    bool            `json:"display"`
			Details    json.RawMessage `json:"details,omitempty"`
			Timestamp  int64           `json:"timestamp"`
		}{m.Role, m.CustomType, e.Content, m.Display, m.Details, m.Timestamp})
		if err == nil {
			m.raw = raw
		}
	}
	return m
}

// bashExecutionText is how the reference sends a bashExecution message.
func bashExecutionText(m Message) string {
	var b strings.Builder
	b.WriteString("Ran `" + m.Command + "`\n")
	if m.Output != "" {
		b.WriteString("```\n" + m.Output + "\n```")
	} else {
		b.WriteString("(no output)")
	}
	switch {
	case m.Cancelled:
		b.WriteString("\n\n(command cancelled)")
	case m.ExitCode != nil && *m.ExitCode != 0:
		b.WriteString("\n\nCommand exited with code " + itoa(*m.ExitCode))
	}
	if m.Truncated && m.FullOutputPath != "" {
		b.WriteString("\n\n[Output truncated. Full output: " + m.FullOutputPath + "]")
	}
	return b.String()
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// ToLLM turns session messages into the conversation sent to the model, as
// the reference does: custom, bashExecution, branchSummary and
// compactionSummary messages become user messages; assistant messages that
// ended in an error or were aborted are left out (their turn is redone);
// thinking blocks, their signatures and the model that wrote each
// assistant message travel with it (each provider decides what goes back:
// runtime/llm's transform.go);
// and every tool call without a result gets an error result saying so
// (InterruptedResultText), placed right after the results of its message.
func ToLLM(msgs []Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	var pending []llm.ToolCall
	answered := map[string]bool{}
	settle := func() {
		for _, c := range pending {
			if !answered[c.ID] {
				out = append(out, llm.Message{
					Role: llm.RoleToolResult, ToolCallID: c.ID, ToolName: c.Name, IsError: true,
					Content: []content.Block{content.Text(InterruptedResultText)},
				})
			}
		}
		pending = nil
		clear(answered)
	}
	for _, m := range msgs {
		switch m.Role {
		case RoleAssistant:
			settle()
			if m.StopReason == string(llm.StopError) || m.StopReason == string(llm.StopAborted) {
				continue
			}
			lm := llm.Message{Role: llm.RoleAssistant, Content: []content.Block{}, API: m.API, Provider: m.Provider, Model: m.Model}
			for _, b := range m.Content {
				switch b.Type {
				case "text":
					lm.Content = append(lm.Content, content.Text(b.Text))
				case "thinking":
					lm.Content = append(lm.Content, content.Block{Type: "thinking", Thinking: b.Thinking, Signature: b.ThinkingSignature, Redacted: b.Redacted})
				case "toolCall":
					lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: compactArgs(b.Arguments), ThoughtSignature: b.ThoughtSignature})
				}
			}
			pending = lm.ToolCalls
			out = append(out, lm)
		case RoleToolResult:
			answered[m.ToolCallID] = true
			out = append(out, llm.Message{
				Role: llm.RoleToolResult, ToolCallID: m.ToolCallID, ToolName: m.ToolName,
				IsError: m.IsError, Content: llmBlocks(m.Content),
			})
		case RoleUser:
			settle()
			out = append(out, llm.Message{Role: llm.RoleUser, Content: llmBlocks(m.Content)})
		default:
			if blocks, ok := UserContent(m); ok {
				settle()
				out = append(out, llm.Message{Role: llm.RoleUser, Content: llmBlocks(blocks)})
			}
		}
	}
	settle()
	return out
}

func llmBlocks(blocks []Block) []content.Block {
	out := make([]content.Block, 0, len(blocks))
	for _, b := range blocks {
		switch b.Type {
		case "text":
			out = append(out, content.Text(b.Text))
		case "image":
			out = append(out, content.Image(b.Data, b.MimeType))
		}
	}
	return out
}

// compactArgs returns the arguments object as compact JSON text ("{}" when
// absent), as the reference sends it.
func compactArgs(raw json.RawMessage) llm.RawArguments {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return llm.RawArguments("{}")
	}
	if !jsonscan.HasSpace(raw) && json.Valid(raw) {
		return llm.RawArguments(raw) // compact already: shared, not copied
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return llm.RawArguments("{}")
	}
	return buf.Bytes()
}

// Unanswered returns the tool calls of the last assistant message on the
// path that have no result after it (a run killed while its tools ran).
func Unanswered(path []*Entry) []Block {
	for i := len(path) - 1; i >= 0; i-- {
		e := path[i]
		if e.Type != TypeMessage {
			continue
		}
		m, err := e.Message()
		if err != nil || m.Role != RoleAssistant {
			continue
		}
		if m.StopReason == string(llm.StopError) || m.StopReason == string(llm.StopAborted) {
			return nil
		}
		answered := map[string]bool{}
		for _, later := range path[i+1:] {
			if lm, err := later.Message(); err == nil && lm.Role == RoleToolResult {
				answered[lm.ToolCallID] = true
			}
		}
		var out []Block
		for _, b := range m.Content {
			if b.Type == "toolCall" && !answered[b.ID] {
				out = append(out, b)
			}
		}
		return out
	}
	return nil
}

// RepairInterrupted appends an error result (InterruptedResultText) for
// every tool call of the leaf's last assistant message that has none, so
// the file is whole again for both programs; it returns how many it added.
//
// # Errors
//
// As AppendMessage.
func (s *Session) RepairInterrupted() (int, error) {
	missing := Unanswered(s.Branch())
	for i, c := range missing {
		_, err := s.AppendMessage(Message{
			Role: RoleToolResult, ToolCallID: c.ID, ToolName: c.Name, IsError: true,
			Content: []Block{{Type: "text", Text: InterruptedResultText}},
		})
		if err != nil {
			return i, err
		}
	}
	return len(missing), nil
}

// AssistantMeta is what an assistant message records besides its content.
type AssistantMeta struct {
	// API is the reference's name of the wire API ("openai-completions").
	API string
	// Provider and Model name the model (written as the reference's
	// provider and model fields).
	Provider, Model string
	Usage           llm.Usage
	StopReason      llm.StopReason
	// ErrorMessage is set for a turn that failed.
	ErrorMessage string
}

// FromLLM turns a message of the loop into a session message. meta is used
// for assistant messages only. A tool call whose argument text is not a
// JSON object is stored with arguments {} (the format requires an object).
func FromLLM(m llm.Message, meta AssistantMeta) Message {
	now := time.Now().UnixMilli()
	switch m.Role {
	case llm.RoleAssistant:
		out := Message{
			Role: RoleAssistant, Timestamp: now, API: meta.API, Provider: meta.Provider, Model: meta.Model,
			StopReason: string(meta.StopReason), ErrorMessage: meta.ErrorMessage,
			Usage: &Usage{
				Input: meta.Usage.InputTokens, Output: meta.Usage.OutputTokens, CacheRead: meta.Usage.CacheReadTokens,
				CacheWrite: meta.Usage.CacheWriteTokens, TotalTokens: meta.Usage.TotalTokens, Cost: UsageCost(meta.Usage.Cost),
			},
		}
		if out.StopReason == "" {
			out.StopReason = string(llm.StopEnd)
		}
		for _, b := range m.Content {
			switch {
			case b.Type == "text" && b.Text != "":
				out.Content = append(out.Content, Block{Type: "text", Text: b.Text})
			case b.Type == "thinking" && (b.Thinking != "" || b.Signature != ""):
				out.Content = append(out.Content, Block{Type: "thinking", Thinking: b.Thinking, ThinkingSignature: b.Signature, Redacted: b.Redacted})
			}
		}
		for _, c := range m.ToolCalls {
			out.Content = append(out.Content, Block{Type: "toolCall", ID: c.ID, Name: c.Name, Arguments: argsObject(c.Arguments), ThoughtSignature: c.ThoughtSignature})
		}
		return out
	case llm.RoleToolResult:
		out := Message{Role: RoleToolResult, Timestamp: now, ToolCallID: m.ToolCallID, ToolName: m.ToolName, IsError: m.IsError, Content: sessionBlocks(m.Content)}
		if m.Details != nil {
			if b, err := marshal(m.Details); err == nil && string(b) != "null" {
				out.Details = b
			}
		}
		return out
	}
	return Message{Role: RoleUser, Timestamp: now, Content: sessionBlocks(m.Content)}
}

func sessionBlocks(blocks []content.Block) []Block {
	out := make([]Block, 0, len(blocks))
	for _, b := range blocks {
		if b.Type == "image" {
			out = append(out, Block{Type: "image", Data: b.Data, MimeType: b.MimeType})
		} else {
			out = append(out, Block{Type: "text", Text: b.Text})
		}
	}
	return out
}

// argsObject returns the argument text as a compact JSON object, {} when
// it is not one.
func argsObject(raw llm.RawArguments) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if !bytes.HasPrefix(t, []byte("{")) || !json.Valid(t) {
		return json.RawMessage("{}")
	}
	if !jsonscan.HasSpace(t) {
		return json.RawMessage(t) // compact already: shared, not copied
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, t); err != nil {
		return json.RawMessage("{}")
	}
	return buf.Bytes()
}

// Model returns the provider and model the current branch last used: the
// latest model_change or assistant message on it; empty when none.
func (s *Session) Model() (provider, model string) {
	return modelOf(s.Branch())
}

// ThinkingLevel returns the thinking level of the latest
// thinking_level_change on the current branch; "" when none.
func (s *Session) ThinkingLevel() string {
	return thinkingLevelOf(s.Branch())
}

// thinkingLevelOf is the level of the latest thinking_level_change on
// path; "" when none.
func thinkingLevelOf(path []*Entry) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == TypeThinkingLevelChange {
			return path[i].ThinkingLevel
		}
	}
	return ""
}

// BranchContext is what a path from the root gives the agent.
type BranchContext struct {
	// Messages is the conversation as the model is to see it
	// (BuildContext).
	Messages []Message
	// Provider and Model are the model the path last used (see Model).
	Provider, Model string
	// ThinkingLevel is the level of the path's latest
	// thinking_level_change; "" when none (the reference's context says
	// "off").
	ThinkingLevel string
}

// ContextAt returns the context of the path from the root to the entry
// id, leaving the leaf where it is: the reference's
// buildSessionContext(entries, leafId). As there, an id the session does
// not have means its last entry (in file order), and "" means before the
// first entry (an empty context).
func (s *Session) ContextAt(id string) BranchContext {
	s.mu.Lock()
	if _, ok := s.byID[id]; !ok && id != "" && len(s.entries) > 0 {
		id = s.entries[len(s.entries)-1].ID
	}
	path := s.branchLocked(id)
	s.mu.Unlock()
	c := BranchContext{Messages: BuildContext(path)}
	c.Provider, c.Model = modelOf(path)
	c.ThinkingLevel = thinkingLevelOf(path)
	return c
}

// modelOf is the provider and model of the latest model_change or
// assistant message on path; empty when none.
func modelOf(path []*Entry) (provider, model string) {
	for i := len(path) - 1; i >= 0; i-- {
		e := path[i]
		switch e.Type {
		case TypeModelChange:
			return e.Provider, e.ModelID
		case TypeMessage:
			if m, err := e.Message(); err == nil && m.Role == RoleAssistant {
				return m.Provider, m.Model
			}
		}
	}
	return "", ""
}
