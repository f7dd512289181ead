package compaction

import (
	"context"

	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

// Compactor compacts a session's current branch for the loop (it is an
// agent.Compactor): Prepare with the settings' KeepRecentTokens,
// Summarize with the provider, the compaction entry appended to the
// session, and the compacted conversation handed back.
type Compactor struct {
	s        *session.Session
	provider llm.Provider
	settings Settings
}

// New returns the Compactor of sess, whose summaries provider writes.
func New(sess *session.Session, provider llm.Provider, settings Settings) *Compactor {
	return &Compactor{s: sess, provider: provider, settings: settings}
}

// Compact compacts the branch now (for any reason alike), with
// instructions for the summary when not empty, and returns the
// conversation to go on with (the session's context, as the model gets
// it) and the compaction.
//
// # Errors
//
// ErrNothingToCompact, ErrAlreadyCompacted, the model's error, a failed
// write of the session file.
func (c *Compactor) Compact(ctx context.Context, _ Reason, instructions string) ([]llm.Message, *Result, error) {
	prep, err := Prepare(c.s.Branch(), c.settings.KeepRecentTokens)
	if err != nil {
		return nil, nil, err
	}
	res, err := Summarize(ctx, c.provider, prep, instructions)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.s.AppendCompaction(*res); err != nil {
		return nil, nil, err
	}
	return session.ToLLM(c.s.Context()), res, nil
}
