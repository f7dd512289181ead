package session

import (
	"unicode/utf8"

	"github.com/pi-go/pi/runtime/llm"
)

// CompactionDetails is the details of pi's (and the reference's)
// compaction entries.
type CompactionDetails struct {
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
}

// CompactionResult is what a compaction entry records (AppendCompaction),
// in the reference's shape: the compaction_end event and the RPC compact
// response carry it as it is. Package runtime/compaction makes it.
type CompactionResult struct {
	Summary          string             `json:"summary"`
	FirstKeptEntryID string             `json:"firstKeptEntryId"`
	TokensBefore     int                `json:"tokensBefore"`
	Details          *CompactionDetails `json:"details,omitempty"`
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
				chars += UTF16Len(b.Text)
			}
		}
	case RoleAssistant:
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				chars += UTF16Len(b.Text)
			case "thinking":
				chars += UTF16Len(b.Thinking)
			case "toolCall":
				chars += UTF16Len(b.Name) + UTF16Len(compactArgs(b.Arguments))
			}
		}
	case RoleCustom, RoleToolResult:
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				chars += UTF16Len(b.Text)
			case "image":
				chars += 4800
			}
		}
	case RoleBashExecution:
		chars = UTF16Len(m.Command) + UTF16Len(m.Output)
	case RoleBranchSummary, RoleCompactionSummary:
		chars = UTF16Len(m.Summary)
	}
	return (chars + 3) / 4
}

// UTF16Len counts a string (or the text of bytes, without copying them) as
// JavaScript's length does (UTF-16 units), so estimates match the
// reference's. An invalid byte counts as one unit, as U+FFFD.
func UTF16Len[S ~string | ~[]byte](s S) int {
	n := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && s[i]|s[i+1]|s[i+2]|s[i+3]|s[i+4]|s[i+5]|s[i+6]|s[i+7] < utf8.RuneSelf {
			n += 8 // eight ASCII bytes at a time: most text is
			i += 8
			continue
		}
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

// EstimateContextTokens is the reference's context size of msgs: the last
// valid response's usage plus an estimate of the messages after it, else an
// estimate of them all.
func EstimateContextTokens(msgs []Message) int {
	return contextTokens(len(msgs), func(i int) *Usage {
		if m := &msgs[i]; m.Role == RoleAssistant && m.StopReason != string(llm.StopError) && m.StopReason != string(llm.StopAborted) {
			return m.Usage
		}
		return nil
	}, func(i int) int { return EstimateTokens(msgs[i]) })
}

// contextTokens is EstimateContextTokens's rule over n messages: usage(i)
// is the i'th message's usage when it counts (a valid response's), nil
// otherwise; tokens(i) its estimate.
func contextTokens(n int, usage func(int) *Usage, tokens func(int) int) int {
	total, from := 0, 0
	for i := n - 1; i >= 0; i-- {
		if u := usage(i); u != nil {
			total, from = u.ContextTokens(), i+1
			break
		}
	}
	for i := from; i < n; i++ {
		total += tokens(i)
	}
	return total
}
