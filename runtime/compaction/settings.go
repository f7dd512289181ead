// Package compaction owns compaction, one place for all of it: the
// settings and their defaults (pi.toml [compaction] and [model]
// context_window, decoded by runtime/config), the threshold (when the
// loop compacts), the cut point (what is summarized and what is kept, by
// the reference agent's rules), the summary request to the model, and a
// ready Compactor for the loop (New) that appends the compaction entry to
// a session. runtime/agent decides when to ask its Compactor; runtime/session
// stores the entry and builds the context from it.
package compaction

import (
	"fmt"

	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

// The defaults: the reference agent's names and values (its
// DEFAULT_COMPACTION_SETTINGS), and the context window pi assumes when
// [model] context_window is not set.
const (
	DefaultContextWindow    = 128000
	DefaultReserveTokens    = 16384
	DefaultKeepRecentTokens = 20000
)

// Settings configure compaction.
type Settings struct {
	// Enabled turns automatic compaction on: after a run whose context
	// passed the threshold, and after a context-overflow error. Manual
	// compaction (/compact) works either way.
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

// DefaultSettings are the settings when pi.toml sets none.
func DefaultSettings() Settings {
	return Settings{Enabled: true, ContextWindow: DefaultContextWindow, ReserveTokens: DefaultReserveTokens, KeepRecentTokens: DefaultKeepRecentTokens}
}

// Validate checks that the settings can work, in pi.toml's names.
//
// # Errors
//
// A size that is not positive, or reserve_tokens not below the context
// window (compaction would start after every turn).
func (s Settings) Validate() error {
	switch {
	case s.ContextWindow <= 0:
		return fmt.Errorf("model.context_window (%d) must be positive", s.ContextWindow)
	case s.ReserveTokens <= 0:
		return fmt.Errorf("compaction.reserve_tokens (%d) must be positive", s.ReserveTokens)
	case s.KeepRecentTokens <= 0:
		return fmt.Errorf("compaction.keep_recent_tokens (%d) must be positive", s.KeepRecentTokens)
	case s.ReserveTokens >= s.ContextWindow:
		return fmt.Errorf("compaction.reserve_tokens (%d) must be smaller than model.context_window (%d)", s.ReserveTokens, s.ContextWindow)
	}
	return nil
}

// ShouldCompact is the threshold, the reference's shouldCompact: automatic
// compaction is on and a context of contextTokens passes ContextWindow -
// ReserveTokens.
func (s Settings) ShouldCompact(contextTokens int) bool {
	return s.Enabled && contextTokens > s.ContextWindow-s.ReserveTokens
}

// ContextTokens is the size of the loop's context after a response whose
// usage is u: the usage's context size (total tokens, else the sum of its
// parts, as session.Usage.ContextTokens), else — a provider that reports
// no usage, or no response since the last compaction — the reference's
// estimate of msgs (session.EstimateTokens: characters / 4).
func ContextTokens(u llm.Usage, msgs []llm.Message) int {
	if n := (session.Usage{Input: u.InputTokens, Output: u.OutputTokens, TotalTokens: u.TotalTokens}).ContextTokens(); n > 0 {
		return n
	}
	n := 0
	for _, m := range msgs {
		n += session.EstimateTokens(session.FromLLM(m, session.AssistantMeta{}))
	}
	return n
}

// Reason says why a compaction runs.
type Reason string

const (
	// Threshold: the context passed ContextWindow - ReserveTokens after a
	// run.
	Threshold Reason = "threshold"
	// Overflow: the provider refused the request as larger than the
	// context window; the run is retried once after the compaction.
	Overflow Reason = "overflow"
	// Manual: /compact.
	Manual Reason = "manual"
)

// Result is a finished compaction: the compaction entry's summary,
// firstKeptEntryId, tokensBefore and details, as compaction_end and the RPC
// compact response report it (the reference's fields).
type Result = session.CompactionResult
