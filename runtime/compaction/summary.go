package compaction

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

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
// model reads it as a document instead of continuing it. Messages of the
// reference's own roles count as the user messages they are sent as
// (session.UserContent).
func SerializeConversation(msgs []session.Message) string {
	var parts []string
	for _, m := range msgs {
		switch m.Role {
		case session.RoleAssistant:
			var texts, thinking, calls []string
			for _, b := range m.Content {
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
		case session.RoleToolResult:
			if t := session.JoinTexts(m.Content, ""); t != "" {
				parts = append(parts, "[Tool result]: "+truncateChars(t, maxToolResultChars))
			}
		case session.RoleUser:
			if t := session.JoinTexts(m.Content, ""); t != "" {
				parts = append(parts, "[User]: "+t)
			}
		default:
			if blocks, ok := session.UserContent(m); ok {
				if t := session.JoinTexts(blocks, ""); t != "" {
					parts = append(parts, "[User]: "+t)
				}
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// callArgs writes an arguments object as key=JSON pairs, in the object's
// own key order, each value as compact JSON (JSON.stringify's form); ""
// when raw is not an object.
func callArgs(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
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
		var buf bytes.Buffer
		if json.Compact(&buf, v) != nil {
			break
		}
		key, _ := k.(string)
		pairs = append(pairs, key+"="+buf.String())
	}
	return strings.Join(pairs, ", ")
}

// truncateChars keeps the first max characters (UTF-16 units, as the
// reference counts) and says how many were cut.
func truncateChars(s string, max int) string {
	n := session.UTF16Len(s)
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

// Summarize has the model write the compaction's summary, in the
// reference's structure, with the read and modified files appended; it
// makes the result the compaction entry records. As the reference's
// compact: when a turn is split, the history (when there is any new) and
// the start of the turn are summarized apart and joined under "**Turn
// Context (split turn):**"; otherwise the history is summarized, even when
// nothing is new (a conversation that fits in keep_recent_tokens: the
// model then gets an empty conversation, and the previous summary when
// there is one). instructions, when set, say what to focus on
// (/compact INSTRUCTIONS).
//
// # Errors
//
// The provider's error, or a response with no text.
func Summarize(ctx context.Context, p llm.Provider, prep *Preparation, instructions string) (*Result, error) {
	var summary string
	if prep.SplitTurn && len(prep.TurnPrefix) > 0 {
		// Without new history the earlier summary (if any) stays the
		// history part; the reference writes "No prior history." even
		// then, which loses it.
		history := "No prior history."
		if prep.PreviousSummary != "" {
			history = prep.PreviousSummary
		}
		if len(prep.ToSummarize) > 0 {
			s, err := summarizeHistory(ctx, p, prep, instructions)
			if err != nil {
				return nil, err
			}
			history = s
		}
		text := "<conversation>\n" + SerializeConversation(prep.TurnPrefix) + "\n</conversation>\n\n" + turnPrefixPrompt
		if instructions != "" {
			text += "\n\nFocus especially on: " + instructions
		}
		prefix, err := complete(ctx, p, text)
		if err != nil {
			return nil, fmt.Errorf("summarize the split turn: %w", err)
		}
		summary = history + "\n\n---\n\n**Turn Context (split turn):**\n\n" + prefix
	} else {
		s, err := summarizeHistory(ctx, p, prep, instructions)
		if err != nil {
			return nil, err
		}
		summary = s
	}
	summary += formatFiles(prep.ReadFiles, prep.ModifiedFiles)
	return &Result{
		Summary: summary, FirstKeptEntryID: prep.FirstKeptEntryID, TokensBefore: prep.TokensBefore,
		Details: &session.CompactionDetails{ReadFiles: nonNil(prep.ReadFiles), ModifiedFiles: nonNil(prep.ModifiedFiles)},
	}, nil
}

// summarizeHistory has the model write (or, with a previous summary,
// update) the summary of prep.ToSummarize.
func summarizeHistory(ctx context.Context, p llm.Provider, prep *Preparation, instructions string) (string, error) {
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
		return "", fmt.Errorf("summarize: %w", err)
	}
	return s, nil
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
