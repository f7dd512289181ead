package session

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// This file gives an entry and a message as the session file holds them,
// for extensions (ABI 1.2's session.branch, session.tree, the context and
// session_before_compact hooks).

// JSON returns the entry's line as the session file holds it (the
// reference's v3 shape), also for an entry not written yet.
//
// # Errors
//
// An entry that cannot be encoded.
func (e *Entry) JSON() ([]byte, error) {
	if e.line != nil {
		return bytes.Clone(e.line), nil
	}
	return e.encode()
}

// DecodeMessage reads a message as the session file holds it (the message
// of a message entry).
//
// # Errors
//
// Not a JSON object of a message.
func DecodeMessage(b []byte) (Message, error) {
	var m Message
	if !json.Valid(b) {
		return m, fmt.Errorf("message: not valid JSON")
	}
	if err := m.decode(bytes.Clone(b)); err != nil {
		return m, fmt.Errorf("message: %w", err)
	}
	return m, nil
}

// AppendHookCompaction appends a compaction whose summary an extension
// gave (ABI 1.2's session_before_compact), with the extension's details
// (any JSON, nil for none); the entry says fromHook. See AppendCompaction.
//
// # Errors
//
// As AppendCompaction; details that are not JSON.
func (s *Session) AppendHookCompaction(c CompactionResult, details json.RawMessage) (string, error) {
	s.mu.Lock()
	_, known := s.byID[c.FirstKeptEntryID]
	s.mu.Unlock()
	if !known {
		return "", fmt.Errorf("session append compaction: no entry %q", c.FirstKeptEntryID)
	}
	if len(details) > 0 && !json.Valid(details) {
		return "", fmt.Errorf("session append compaction: details are not valid JSON")
	}
	return s.append(&Entry{Type: TypeCompaction, entryFields: &entryFields{Summary: c.Summary, FirstKeptEntryID: c.FirstKeptEntryID, TokensBefore: c.TokensBefore, Details: details, FromHook: true}})
}

// AppendHookBranchSummary is AppendBranchSummary for a summary an
// extension gave (ABI 1.2's session_before_tree), with its details (any
// JSON, nil for none); the entry says fromHook.
//
// # Errors
//
// As AppendBranchSummary; details that are not JSON.
func (s *Session) AppendHookBranchSummary(at, summary string, details json.RawMessage) (string, error) {
	if summary == "" {
		return "", fmt.Errorf("session branch summary: the summary is empty")
	}
	if len(details) > 0 && !json.Valid(details) {
		return "", fmt.Errorf("session branch summary: details are not valid JSON")
	}
	if err := s.SetLeaf(at); err != nil {
		return "", fmt.Errorf("session branch summary: %w", err)
	}
	from := at
	if from == "" {
		from = "root"
	}
	return s.append(&Entry{Type: TypeBranchSummary, entryFields: &entryFields{FromID: from, Summary: summary, Details: details, FromHook: true}})
}

// AppendCustomMessage appends a custom_message entry (the reference's
// appendCustomMessageEntry; ABI 1.2's agent.sendMessage): content, a JSON
// string or content blocks, is sent to the model as a user message;
// display says the front end shows it; details (JSON, nil for none) are
// never sent. The entry becomes the leaf.
//
// # Errors
//
// ErrBadCustom for a bad customType, content that is not JSON, details
// that are not JSON; otherwise as AppendMessage.
func (s *Session) AppendCustomMessage(customType string, content json.RawMessage, display bool, details json.RawMessage) (string, error) {
	if err := checkCustomType(customType); err != nil {
		return "", err
	}
	if !json.Valid(content) {
		return "", fmt.Errorf("%w: content is not valid JSON", ErrBadCustom)
	}
	if len(details) > 0 && !json.Valid(details) {
		return "", fmt.Errorf("%w: details are not valid JSON", ErrBadCustom)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, content); err != nil {
		return "", fmt.Errorf("%w: content: %v", ErrBadCustom, err)
	}
	return s.append(&Entry{Type: TypeCustomMessage, entryFields: &entryFields{CustomType: customType, Content: c.Bytes(), Display: display, Details: details}})
}
