package agent

import (
	"context"

	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// The loop's prompt hooks (ABI 1.1's before_agent_start and stop): options
// of Config, so the loop knows nothing of extensions.

// MaxStopContinues is how many times per prompt the Stop hook may keep a
// run going; after that it is not called again for the run and
// Config.OnStopCapped is told.
const MaxStopContinues = 3

// BeforeStartFunc is called once per Run or Prompt, before the prompt is
// added, with the prompt and the system prompt. What it returns holds for
// every turn of that run: the system prompt to use, and context messages
// (each a user-role message's content) added before the prompt.
type BeforeStartFunc func(ctx context.Context, prompt, systemPrompt string) (string, [][]tool.ContentBlock)

// StopInfo is what a StopFunc is told: the model ended a turn without
// tool calls and the run is about to end.
type StopInfo struct {
	// LastText is the text of the model's last message.
	LastText string
	// Turns counts the run's turns so far, continues included.
	Turns int
}

// StopFunc may keep a run going: continue true sends message as a user
// message and the loop goes on. It is called only when the model ends a
// turn normally without tool calls (not after an error, an abort,
// Config.MaxTurns or a terminating tool), at most MaxStopContinues times
// with a continue per run.
type StopFunc func(ctx context.Context, s StopInfo) (message string, cont bool)

// beforeStart runs Config.BeforeStart for a run: it sets the run's system
// prompt and adds the context messages.
func (a *Agent) beforeStart(ctx context.Context, prompt string) {
	a.mu.Lock()
	a.runSystem = a.cfg.SystemPrompt
	a.mu.Unlock()
	if a.cfg.BeforeStart == nil {
		return
	}
	sys, msgs := a.cfg.BeforeStart(ctx, prompt, a.cfg.SystemPrompt)
	a.mu.Lock()
	a.runSystem = sys
	a.mu.Unlock()
	for _, content := range msgs {
		m := llm.Message{Role: llm.RoleUser, Content: content}
		a.appendMessages(m)
		a.emit(Event{Type: EventMessageStart, Message: &m})
		a.emit(Event{Type: EventMessageEnd, Message: &m})
	}
}

// stopContinue asks Config.Stop whether a run that is about to end goes
// on; it adds the message when it does. continues counts this run's.
func (a *Agent) stopContinue(ctx context.Context, msg llm.Message, turns int, continues *int) bool {
	if a.cfg.Stop == nil || ctx.Err() != nil {
		return false
	}
	if *continues >= MaxStopContinues {
		if a.cfg.OnStopCapped != nil {
			a.cfg.OnStopCapped()
		}
		return false
	}
	text, cont := a.cfg.Stop(ctx, StopInfo{LastText: messageText(msg), Turns: turns})
	if !cont || text == "" {
		return false
	}
	*continues++
	user := llm.Message{Role: llm.RoleUser, Content: []tool.ContentBlock{tool.Text(text)}}
	a.appendMessages(user)
	a.emit(Event{Type: EventMessageStart, Message: &user})
	a.emit(Event{Type: EventMessageEnd, Message: &user})
	return true
}
