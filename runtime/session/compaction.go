package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/llm"
)

// Compaction defaults: the reference's names and values.
const (
	DefaultContextWindow    = 128000
	DefaultReserveTokens    = 16384
	DefaultKeepRecentTokens = 20000
)

// CompactionSettings configure compaction (pi.toml [compaction] and
// [model] context_window).
type CompactionSettings struct {
	// Enabled turns automatic compaction on (manual compaction works
	// either way).
	Enabled bool
	// ContextWindow is the model's context size in tokens.
	ContextWindow int
	// ReserveTokens are kept free for the answer: compaction starts when
	// the context passes ContextWindow - ReserveTokens.
	ReserveTokens int
	// KeepRecentTokens is roughly how much of the latest conversation is
	// kept as it is (not summarized).
	KeepRecentTokens int
}

// DefaultCompactionSettings are the reference's defaults.
func DefaultCompactionSettings() CompactionSettings {
	return CompactionSettings{Enabled: true, ContextWindow: DefaultContextWindow, ReserveTokens: DefaultReserveTokens, KeepRecentTokens: DefaultKeepRecentTokens}
}

// ShouldCompact reports whether a context of tokens passes the threshold
// (ContextWindow - ReserveTokens) with automatic compaction enabled.
func (c CompactionSettings) ShouldCompact(tokens int) bool {
	return c.Enabled && tokens > c.ContextWindow-c.ReserveTokens
}

// EstimateTokens estimates a message's tokens as the reference does:
// characters / 4, rounded up (an image counts 1200 tokens in a tool result
// or custom message).
func EstimateTokens(m Message) int {
	chars := 0
	switch m.Role {
	case RoleUser:
		for _, b := range m.Content {
			if b.Type == "text" {
				chars += utf16Len(b.Text)
			}
		}
	case RoleAssistant:
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				chars += utf16Len(b.Text)
			case "thinking":
				chars += utf16Len(b.Thinking)
			case "toolCall":
				chars += utf16Len(b.Name) + utf16Len(compactArgs(b.Arguments))
			}
		}
	case RoleCustom, RoleToolResult:
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				chars += utf16Len(b.Text)
			case "image":
				chars += 4800
			}
		}
	case RoleBashExecution:
		chars = utf16Len(m.Command) + utf16Len(m.Output)
	case RoleBranchSummary, RoleCompactionSummary:
		chars = utf16Len(m.Summary)
	}
	return (chars + 3) / 4
}

// utf16Len counts a string (or the text of bytes, without copying them) as
// JavaScript's length does (UTF-16 units), so estimates match the
// reference's. An invalid byte counts as one unit, as U+FFFD.
func utf16Len[S ~string | ~[]byte](s S) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		// A few bytes at a time, so the conversion needs no allocation.
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// lastUsage returns the usage of the last assistant message that neither
// failed nor was aborted, and its index; -1 when there is none.
func lastUsage(msgs []Message) (Usage, int) {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == RoleAssistant && m.Usage != nil && m.StopReason != string(llm.StopError) && m.StopReason != string(llm.StopAborted) {
			return *m.Usage, i
		}
	}
	return Usage{}, -1
}

// EstimateContextTokens is the reference's context size of msgs: the last
// valid response's usage plus an estimate of the messages after it, else an
// estimate of them all.
func EstimateContextTokens(msgs []Message) int {
	u, idx := lastUsage(msgs)
	total := 0
	if idx >= 0 {
		total = u.ContextTokens()
	}
	for _, m := range msgs[idx+1:] {
		total += EstimateTokens(m)
	}
	return total
}

// isCutPoint reports whether the conversation may start at e: a user,
// assistant, custom or bashExecution message, a custom_message or a
// branch_summary, never a tool result (which must follow its call).
func isCutPoint(e *Entry) bool {
	switch e.Type {
	case TypeBranchSummary, TypeCustomMessage:
		return true
	case TypeMessage:
		m, err := e.Message()
		if err != nil {
			return false
		}
		switch m.Role {
		case RoleUser, RoleAssistant, RoleCustom, RoleBashExecution, RoleBranchSummary, RoleCompactionSummary:
			return true
		}
	}
	return false
}

// startsTurn reports whether e starts a turn: a user or bashExecution
// message, a custom_message or a branch_summary.
func startsTurn(e *Entry) bool {
	switch e.Type {
	case TypeBranchSummary, TypeCustomMessage:
		return true
	case TypeMessage:
		m, err := e.Message()
		return err == nil && (m.Role == RoleUser || m.Role == RoleBashExecution)
	}
	return false
}

// CutPoint is where compaction cuts a path.
type CutPoint struct {
	// FirstKept is the index of the first entry kept.
	FirstKept int
	// TurnStart is the index of the entry that starts the turn FirstKept
	// is in, when the cut splits a turn; -1 otherwise.
	TurnStart int
	// SplitTurn says the cut is inside a turn (at an assistant message).
	SplitTurn bool
}

// FindCutPoint chooses where to cut path[start:end] so that about
// keepRecent tokens stay, by the reference's rules: walking back from the
// newest message and adding up estimates until keepRecent is reached, the
// cut is the first valid cut point (see isCutPoint) at or after that
// message — so a tool result always stays with its call — then moves back
// over non-message entries (settings, labels) up to a message or a
// compaction. With no valid cut point the cut is at start.
func FindCutPoint(path []*Entry, start, end, keepRecent int) CutPoint {
	var cuts []int
	for i := start; i < end; i++ {
		if isCutPoint(path[i]) {
			cuts = append(cuts, i)
		}
	}
	if len(cuts) == 0 {
		return CutPoint{FirstKept: start, TurnStart: -1}
	}
	cut := cuts[0]
	acc := 0
	for i := end - 1; i >= start; i-- {
		if path[i].Type != TypeMessage {
			continue
		}
		m, err := path[i].Message()
		if err != nil {
			continue
		}
		acc += EstimateTokens(*m)
		if acc >= keepRecent {
			for _, c := range cuts {
				if c >= i {
					cut = c
					break
				}
			}
			break
		}
	}
	for cut > start {
		prev := path[cut-1]
		if prev.Type == TypeCompaction || prev.Type == TypeMessage {
			break
		}
		cut--
	}
	cp := CutPoint{FirstKept: cut, TurnStart: -1}
	if m, err := path[cut].Message(); err == nil && m.Role == RoleUser {
		return cp
	}
	for i := cut; i >= start; i-- {
		if startsTurn(path[i]) {
			cp.TurnStart = i
			cp.SplitTurn = true
			break
		}
	}
	return cp
}

// Preparation is what a compaction summarizes and keeps.
type Preparation struct {
	// FirstKeptEntryID is where the kept conversation starts.
	FirstKeptEntryID string
	// ToSummarize are the messages the summary replaces (from the previous
	// compaction's kept start, or the root, to the cut or the split turn).
	ToSummarize []Message
	// TurnPrefix is the start of a split turn, summarized apart.
	TurnPrefix []Message
	SplitTurn  bool
	// TokensBefore is the context size before compaction.
	TokensBefore int
	// PreviousSummary is the summary of the previous compaction, updated
	// rather than rewritten.
	PreviousSummary string
	// ReadFiles and ModifiedFiles are the files the summarized tool calls
	// read and changed, with the previous compaction's.
	ReadFiles, ModifiedFiles []string
}

// ErrNothingToCompact is returned (wrapped) when a branch has nothing a
// compaction could summarize.
var ErrNothingToCompact = errors.New("nothing to compact")

// Prepare works out a compaction of path (root to leaf) by the reference's
// rules.
//
// # Errors
//
// ErrNothingToCompact when the path ends with a compaction, or the cut
// leaves nothing to summarize.
func Prepare(path []*Entry, keepRecent int) (*Preparation, error) {
	if len(path) == 0 {
		return nil, fmt.Errorf("%w: the session is empty", ErrNothingToCompact)
	}
	if path[len(path)-1].Type == TypeCompaction {
		return nil, fmt.Errorf("%w: the session was just compacted", ErrNothingToCompact)
	}
	prevIdx := -1
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == TypeCompaction {
			prevIdx = i
			break
		}
	}
	p := &Preparation{}
	start := 0
	if prevIdx >= 0 {
		prev := path[prevIdx]
		p.PreviousSummary = prev.Summary
		start = prevIdx + 1
		if k := slices.IndexFunc(path, func(e *Entry) bool { return e.ID == prev.FirstKeptEntryID }); k >= 0 {
			start = k
		}
	}
	p.TokensBefore = EstimateContextTokens(BuildContext(path))
	cut := FindCutPoint(path, start, len(path), keepRecent)
	p.FirstKeptEntryID = path[cut.FirstKept].ID
	p.SplitTurn = cut.SplitTurn
	historyEnd := cut.FirstKept
	if cut.SplitTurn {
		historyEnd = cut.TurnStart
	}
	for _, e := range path[start:historyEnd] {
		if m, ok := summarizable(e); ok {
			p.ToSummarize = append(p.ToSummarize, m)
		}
	}
	if cut.SplitTurn {
		for _, e := range path[cut.TurnStart:cut.FirstKept] {
			if m, ok := summarizable(e); ok {
				p.TurnPrefix = append(p.TurnPrefix, m)
			}
		}
	}
	if len(p.ToSummarize) == 0 && len(p.TurnPrefix) == 0 {
		return nil, fmt.Errorf("%w: the whole conversation fits in keep_recent_tokens", ErrNothingToCompact)
	}
	read, modified := map[string]bool{}, map[string]bool{}
	if prevIdx >= 0 && !path[prevIdx].FromHook && len(path[prevIdx].Details) > 0 {
		var d CompactionDetails
		if json.Unmarshal(path[prevIdx].Details, &d) == nil {
			for _, f := range d.ReadFiles {
				read[f] = true
			}
			for _, f := range d.ModifiedFiles {
				modified[f] = true
			}
		}
	}
	for _, m := range append(slices.Clone(p.ToSummarize), p.TurnPrefix...) {
		fileOps(m, read, modified)
	}
	for f := range read {
		if !modified[f] {
			p.ReadFiles = append(p.ReadFiles, f)
		}
	}
	for f := range modified {
		p.ModifiedFiles = append(p.ModifiedFiles, f)
	}
	sort.Strings(p.ReadFiles)
	sort.Strings(p.ModifiedFiles)
	return p, nil
}

// summarizable returns the message an entry contributes to a summary.
func summarizable(e *Entry) (Message, bool) {
	switch e.Type {
	case TypeMessage:
		m, err := e.Message()
		if err != nil {
			return Message{}, false
		}
		return *m, true
	case TypeCustomMessage:
		blocks, _ := decodeContent(e.Content)
		return Message{Role: RoleCustom, CustomType: e.CustomType, Content: blocks}, true
	case TypeBranchSummary:
		return Message{Role: RoleBranchSummary, Summary: e.Summary, FromID: e.FromID}, true
	}
	return Message{}, false
}

// fileOps records the path argument of read, write and edit calls.
func fileOps(m Message, read, modified map[string]bool) {
	if m.Role != RoleAssistant {
		return
	}
	for _, b := range m.Content {
		if b.Type != "toolCall" {
			continue
		}
		var args struct {
			Path any `json:"path"`
		}
		if json.Unmarshal(b.Arguments, &args) != nil {
			continue
		}
		p, ok := args.Path.(string)
		if !ok || p == "" {
			continue
		}
		switch b.Name {
		case "read":
			read[p] = true
		case "write", "edit":
			modified[p] = true
		}
	}
}

// CompactionDetails is the details of pi's (and the reference's)
// compaction entries.
type CompactionDetails struct {
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
}

// CompactionResult is a finished compaction, as the compaction entry and
// the compaction_end event carry it.
type CompactionResult struct {
	Summary          string             `json:"summary"`
	FirstKeptEntryID string             `json:"firstKeptEntryId"`
	TokensBefore     int                `json:"tokensBefore"`
	Details          *CompactionDetails `json:"details,omitempty"`
}

// The prompts of the summarizing call. The section headings are the
// reference's summary structure, so either program can read and update the
// other's summaries.
const (
	summarySystemPrompt = `You summarize conversations between a user and an AI coding assistant so that another assistant can pick up the work. Reply with the summary only, in the format asked for: do not continue the conversation and do not answer questions in it.`

	summaryFormat = `## Goal
[What the user wants to achieve; several items if the session covered several tasks.]

## Constraints & Preferences
- [Requirements and preferences the user stated, or "(none)"]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work under way]

### Blocked
- [What stops progress, if anything]

## Key Decisions
- **[Decision]**: [Why, briefly]

## Next Steps
1. [What to do next, in order]

## Critical Context
- [Data, examples or references needed to go on, or "(none)"]`

	summaryPrompt = `The conversation above is to be summarized into a structured checkpoint from which another assistant will continue the work. Use exactly this format:

` + summaryFormat + `

Keep each section short. Keep file paths, function names and error messages exactly as written.`

	updateSummaryPrompt = `The conversation above is NEW: fold it into the earlier summary given in <previous-summary>. Keep everything the earlier summary says unless it no longer matters; add the new progress, decisions and context; move finished items from "In Progress" to "Done"; bring "Next Steps" up to date. Use exactly this format:

` + summaryFormat + `

Keep each section short. Keep file paths, function names and error messages exactly as written.`

	turnPrefixPrompt = `The conversation above is the START of one turn that was too long to keep; its end is kept as it is. Summarize this start so the kept end makes sense:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions made and work done in this start]

## Context for Suffix
- [What is needed to understand the kept end]

Be brief.`
)

// maxToolResultChars bounds a tool result in the text sent to be
// summarized.
const maxToolResultChars = 2000

// SerializeConversation writes messages as the plain text the summarizing
// call gets ("[User]: ...", "[Assistant]: ...", "[Assistant tool calls]:
// name(key=value, ...)", "[Tool result]: ..." cut to 2000 characters), so the
// model reads it as a document instead of continuing it.
func SerializeConversation(msgs []Message) string {
	var parts []string
	for _, lm := range toSummaryInput(msgs) {
		switch lm.Role {
		case RoleUser:
			if t := joinTexts(lm.Content, ""); t != "" {
				parts = append(parts, "[User]: "+t)
			}
		case RoleAssistant:
			var texts, thinking, calls []string
			for _, b := range lm.Content {
				switch b.Type {
				case "text":
					texts = append(texts, b.Text)
				case "thinking":
					thinking = append(thinking, b.Thinking)
				case "toolCall":
					calls = append(calls, b.Name+"("+callArgs(b.Arguments)+")")
				}
			}
			if len(thinking) > 0 {
				parts = append(parts, "[Assistant thinking]: "+strings.Join(thinking, "\n"))
			}
			if len(texts) > 0 {
				parts = append(parts, "[Assistant]: "+strings.Join(texts, "\n"))
			}
			if len(calls) > 0 {
				parts = append(parts, "[Assistant tool calls]: "+strings.Join(calls, "; "))
			}
		case RoleToolResult:
			if t := joinTexts(lm.Content, ""); t != "" {
				parts = append(parts, "[Tool result]: "+truncateChars(t, maxToolResultChars))
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// toSummaryInput turns the reference's own roles into user messages, as
// for the model.
func toSummaryInput(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case RoleUser, RoleAssistant, RoleToolResult:
			out = append(out, m)
		case RoleCustom:
			out = append(out, Message{Role: RoleUser, Content: m.Content})
		case RoleBashExecution:
			if !m.ExcludeFromContext {
				out = append(out, Message{Role: RoleUser, Content: []Block{{Type: "text", Text: bashExecutionText(m)}}})
			}
		case RoleBranchSummary:
			out = append(out, Message{Role: RoleUser, Content: []Block{{Type: "text", Text: branchSummaryPrefix + m.Summary + branchSummarySuffix}}})
		case RoleCompactionSummary:
			out = append(out, Message{Role: RoleUser, Content: []Block{{Type: "text", Text: compactionSummaryPrefix + m.Summary + compactionSummarySuffix}}})
		}
	}
	return out
}

func joinTexts(blocks []Block, sep string) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, sep)
}

// callArgs writes an arguments object as key=JSON pairs, in the object's
// own key order.
func callArgs(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(compactArgs(raw)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	var pairs []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		key, _ := k.(string)
		pairs = append(pairs, key+"="+string(v))
	}
	return strings.Join(pairs, ", ")
}

// truncateChars keeps the first max characters (UTF-16 units, as the
// reference counts) and says how many were cut.
func truncateChars(s string, max int) string {
	n := utf16Len(s)
	if n <= max {
		return s
	}
	count := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if count+w > max {
			return s[:i] + fmt.Sprintf("\n\n[... %d more characters truncated]", n-count)
		}
		count += w
	}
	return s
}

// formatFiles is the file lists appended to a summary.
func formatFiles(read, modified []string) string {
	var sections []string
	if len(read) > 0 {
		sections = append(sections, "<read-files>\n"+strings.Join(read, "\n")+"\n</read-files>")
	}
	if len(modified) > 0 {
		sections = append(sections, "<modified-files>\n"+strings.Join(modified, "\n")+"\n</modified-files>")
	}
	if len(sections) == 0 {
		return ""
	}
	return "\n\n" + strings.Join(sections, "\n\n")
}

// Summarize has the model write the compaction's summary (the history,
// and the start of a split turn apart), in the reference's structure, with
// the read and modified files appended. instructions, when set, say what
// to focus on (/compact INSTRUCTIONS).
//
// # Errors
//
// The provider's error, or a response with no text.
func Summarize(ctx context.Context, p llm.Provider, prep *Preparation, instructions string) (*CompactionResult, error) {
	var summary string
	if len(prep.ToSummarize) > 0 || !prep.SplitTurn {
		prompt := summaryPrompt
		if prep.PreviousSummary != "" {
			prompt = updateSummaryPrompt
		}
		if instructions != "" {
			prompt += "\n\nFocus especially on: " + instructions
		}
		text := "<conversation>\n" + SerializeConversation(prep.ToSummarize) + "\n</conversation>\n\n"
		if prep.PreviousSummary != "" {
			text += "<previous-summary>\n" + prep.PreviousSummary + "\n</previous-summary>\n\n"
		}
		s, err := complete(ctx, p, text+prompt)
		if err != nil {
			return nil, fmt.Errorf("summarize: %w", err)
		}
		summary = s
	} else {
		// Only the start of a split turn is new: the earlier summary (if
		// any) stays the history part.
		summary = "No prior history."
		if prep.PreviousSummary != "" {
			summary = prep.PreviousSummary
		}
	}
	if prep.SplitTurn && len(prep.TurnPrefix) > 0 {
		text := "<conversation>\n" + SerializeConversation(prep.TurnPrefix) + "\n</conversation>\n\n" + turnPrefixPrompt
		if instructions != "" {
			text += "\n\nFocus especially on: " + instructions
		}
		s, err := complete(ctx, p, text)
		if err != nil {
			return nil, fmt.Errorf("summarize the split turn: %w", err)
		}
		summary += "\n\n---\n\n**Turn Context (split turn):**\n\n" + s
	}
	summary += formatFiles(prep.ReadFiles, prep.ModifiedFiles)
	return &CompactionResult{
		Summary: summary, FirstKeptEntryID: prep.FirstKeptEntryID, TokensBefore: prep.TokensBefore,
		Details: &CompactionDetails{ReadFiles: nonNil(prep.ReadFiles), ModifiedFiles: nonNil(prep.ModifiedFiles)},
	}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// complete runs one model call without tools and returns its text.
func complete(ctx context.Context, p llm.Provider, prompt string) (string, error) {
	resp, err := p.Stream(ctx, llm.Request{
		SystemPrompt: summarySystemPrompt,
		Messages:     []llm.Message{{Role: llm.RoleUser, Content: []content.Block{content.Text(prompt)}}},
	}, nil)
	if err != nil {
		return "", err
	}
	if resp.StopReason == llm.StopError || resp.StopReason == llm.StopAborted {
		return "", fmt.Errorf("the model stopped (%s) before finishing the summary", resp.StopReason)
	}
	var parts []string
	for _, b := range resp.Message.Content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	text := strings.TrimSpace(strings.Join(parts, "\n"))
	if text == "" {
		return "", errors.New("the model returned an empty summary")
	}
	return text, nil
}
