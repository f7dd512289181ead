package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-go/pi/runtime/compaction"
	"github.com/pi-go/pi/runtime/llm"
)

// CompactReason says why a compaction runs (package compaction's Reason).
type CompactReason = compaction.Reason

// The reasons, as compaction_start and compaction_end name them.
const (
	// CompactThreshold: the context passed the threshold after a run
	// (compaction.Settings.ShouldCompact).
	CompactThreshold = compaction.Threshold
	// CompactOverflow: the provider refused the request as larger than the
	// context window; the run is retried once after the compaction.
	CompactOverflow = compaction.Overflow
	// CompactManual: Agent.Compact (/compact).
	CompactManual = compaction.Manual
)

// CompactionResult is a finished compaction as compaction_end reports it
// (package compaction's Result: the reference's fields).
type CompactionResult = compaction.Result

// Compactor compacts the conversation an agent is running: it summarizes
// older messages (in its session) and returns the conversation to go on
// with. compaction.New makes the one pi uses.
type Compactor interface {
	Compact(ctx context.Context, reason CompactReason, instructions string) ([]llm.Message, *CompactionResult, error)
}

// Compaction configures compaction in the loop: the loop only decides when
// to ask the Compactor.
type Compaction struct {
	// Compactor does the work; nil turns compaction off (and
	// Agent.Compact fails).
	Compactor Compactor
	// Settings say when: with Enabled, after a run whose context passes
	// the threshold (Settings.ShouldCompact), and after a context-overflow
	// error (then the run is retried once). Without it only Agent.Compact
	// compacts.
	Settings compaction.Settings
}

// ErrNoCompactor is returned (wrapped) by Compact when the agent has no
// Compactor.
var ErrNoCompactor = errors.New("compaction is not configured")

// Compact compacts the conversation now (/compact), with instructions for
// the summary when not empty; it emits compaction_start and
// compaction_end.
//
// # Errors
//
// ErrBusy while a run is in progress, ErrNoCompactor, and the
// Compactor's error.
func (a *Agent) Compact(ctx context.Context, instructions string) (*CompactionResult, error) {
	if a.cfg.Compaction.Compactor == nil {
		return nil, fmt.Errorf("agent compact: %w", ErrNoCompactor)
	}
	a.mu.Lock()
	if a.running {
		a.mu.Unlock()
		return nil, fmt.Errorf("agent compact: %w", ErrBusy)
	}
	a.running = true
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.running = false
		a.mu.Unlock()
	}()
	return a.compact(ctx, CompactManual, instructions, false)
}

// compact runs the Compactor with its events and takes the conversation it
// returns.
func (a *Agent) compact(ctx context.Context, reason CompactReason, instructions string, retry bool) (*CompactionResult, error) {
	a.emit(Event{Type: EventCompactionStart, Reason: reason})
	msgs, result, err := a.cfg.Compaction.Compactor.Compact(ctx, reason, instructions)
	aborted := err != nil && ctx.Err() != nil
	willRetry := retry && err == nil
	end := Event{Type: EventCompactionEnd, Reason: reason, Aborted: &aborted, WillRetry: &willRetry}
	if err != nil {
		if !aborted {
			end.ErrorMessage = compactionFailure(reason, err)
		}
		a.emit(end)
		return nil, err
	}
	a.mu.Lock()
	a.messages = append([]llm.Message(nil), msgs...)
	a.lastUsage = llm.Usage{}
	a.mu.Unlock()
	end.Compaction = result
	a.emit(end)
	return result, nil
}

func compactionFailure(reason CompactReason, err error) string {
	switch reason {
	case CompactOverflow:
		return "Context overflow recovery failed: " + err.Error()
	case CompactThreshold:
		return "Auto-compaction failed: " + err.Error()
	}
	return "Compaction failed: " + err.Error()
}

// recoverOverflow compacts after a context-overflow error and runs once
// more; it returns the error of the run (nil when the retry succeeded).
func (a *Agent) recoverOverflow(ctx context.Context, runErr error, res *RunResult) error {
	a.logger.Debug("context overflow; compacting and retrying once", "error", runErr)
	if _, err := a.compact(ctx, CompactOverflow, "", true); err != nil {
		return fmt.Errorf("%w (compacting the conversation to fit failed: %v)", runErr, err)
	}
	err := a.runOnce(ctx, nil, res)
	if err != nil && llm.IsContextOverflow(err) {
		return fmt.Errorf("context overflow recovery failed after one compact-and-retry attempt: %w; start a new session, or use a model with a larger context window", err)
	}
	return err
}

// autoCompact compacts after a run whose context passed the threshold.
// A failure is reported in compaction_end and logged; the run's result
// stands.
func (a *Agent) autoCompact(ctx context.Context, res *RunResult) {
	c := a.cfg.Compaction
	if c.Compactor == nil || res.StopReason == llm.StopAborted || ctx.Err() != nil {
		return
	}
	a.mu.Lock()
	tokens := compaction.ContextTokens(a.lastUsage, a.messages)
	a.mu.Unlock()
	if !c.Settings.ShouldCompact(tokens) {
		return
	}
	a.logger.Debug("context passed the compaction threshold", "tokens", tokens, "window", c.Settings.ContextWindow, "reserve", c.Settings.ReserveTokens)
	if _, err := a.compact(ctx, CompactThreshold, "", false); err != nil {
		a.logger.Warn("auto-compaction failed", "error", err)
	}
}
