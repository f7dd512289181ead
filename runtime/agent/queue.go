package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/llm"
)

// QueueMode says how many queued messages one delivery takes.
type QueueMode string

const (
	// QueueOneAtATime delivers one queued message per delivery point (the
	// default, as the reference agent does).
	QueueOneAtATime QueueMode = "one-at-a-time"
	// QueueAll delivers every queued message at once.
	QueueAll QueueMode = "all"
)

// ParseQueueMode checks a queue mode's name ("all" or "one-at-a-time").
//
// # Errors
//
// Any other name.
func ParseQueueMode(s string) (QueueMode, error) {
	switch QueueMode(s) {
	case QueueOneAtATime, QueueAll:
		return QueueMode(s), nil
	}
	return "", fmt.Errorf("queue mode %q: want \"all\" or \"one-at-a-time\"", s)
}

// UserMessage is a user message of text followed by images (image blocks,
// content.Image).
func UserMessage(text string, images ...content.Block) llm.Message {
	blocks := []content.Block{content.Text(text)}
	blocks = append(blocks, images...)
	return llm.Message{Role: llm.RoleUser, Content: blocks}
}

// Steer queues a user message for the running run: it is delivered after
// the current assistant turn has finished executing its tool calls, before
// the next model call (a run whose model already stopped goes on with it).
// Sent while no run is going on, it waits for the next run's first
// delivery point. It emits queue_update. Steer may be called from any
// goroutine.
func (a *Agent) Steer(m llm.Message) {
	m.Role = llm.RoleUser
	a.mu.Lock()
	a.steering = append(a.steering, m)
	a.mu.Unlock()
	a.emitQueue()
}

// FollowUp queues a user message delivered only when the run would
// otherwise end (the model stopped calling tools and no steering message
// is queued); the run then goes on with it. It emits queue_update. FollowUp
// may be called from any goroutine.
func (a *Agent) FollowUp(m llm.Message) {
	m.Role = llm.RoleUser
	a.mu.Lock()
	a.followUp = append(a.followUp, m)
	a.mu.Unlock()
	a.emitQueue()
}

// SetQueueModes sets how many steering and follow-up messages one delivery
// takes; an empty mode leaves that queue's mode as it is.
func (a *Agent) SetQueueModes(steering, followUp QueueMode) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if steering != "" {
		a.steeringMode = steering
	}
	if followUp != "" {
		a.followUpMode = followUp
	}
}

// QueueModes returns the steering and follow-up modes.
func (a *Agent) QueueModes() (steering, followUp QueueMode) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return modeOr(a.steeringMode), modeOr(a.followUpMode)
}

// Queued returns copies of the messages waiting in the steering and
// follow-up queues.
func (a *Agent) Queued() (steering, followUp []llm.Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]llm.Message(nil), a.steering...), append([]llm.Message(nil), a.followUp...)
}

// ClearQueues empties both queues and returns what they held (a front end
// puts the texts back into its editor); it emits queue_update when they
// were not empty.
func (a *Agent) ClearQueues() (steering, followUp []llm.Message) {
	a.mu.Lock()
	steering, followUp = a.steering, a.followUp
	a.steering, a.followUp = nil, nil
	a.mu.Unlock()
	if len(steering)+len(followUp) > 0 {
		a.emitQueue()
	}
	return steering, followUp
}

// Running reports whether a run or a compaction is in progress.
func (a *Agent) Running() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running
}

// PromptMessage continues the conversation with the user message m (text
// and images, see UserMessage), as Prompt does with a text.
//
// # Errors
//
// As Run.
func (a *Agent) PromptMessage(ctx context.Context, m llm.Message) (*RunResult, error) {
	m.Role = llm.RoleUser
	return a.run(ctx, &m, false)
}

func modeOr(m QueueMode) QueueMode {
	if m == "" {
		return QueueOneAtATime
	}
	return m
}

// takeQueued removes and returns what one delivery takes of the steering
// queue (steering true) or the follow-up queue.
func (a *Agent) takeQueued(steering bool) []llm.Message {
	a.mu.Lock()
	q, mode := &a.followUp, a.followUpMode
	if steering {
		q, mode = &a.steering, a.steeringMode
	}
	n := len(*q)
	if n > 1 && modeOr(mode) == QueueOneAtATime {
		n = 1
	}
	out := append([]llm.Message(nil), (*q)[:n]...)
	*q = append([]llm.Message(nil), (*q)[n:]...)
	a.mu.Unlock()
	if n > 0 {
		a.emitQueue()
	}
	return out
}

// nextDelivery is what the run goes on with after a turn in which the
// model called no tools: the next steering messages, else the next
// follow-up messages; nil ends the run.
func (a *Agent) nextDelivery() []llm.Message {
	if m := a.takeQueued(true); len(m) > 0 {
		return m
	}
	return a.takeQueued(false)
}

// emitQueue emits queue_update with the texts of both queues.
func (a *Agent) emitQueue() {
	a.mu.Lock()
	ev := Event{Type: EventQueueUpdate, Steering: queueTexts(a.steering), FollowUp: queueTexts(a.followUp)}
	a.mu.Unlock()
	a.emit(ev)
}

func queueTexts(msgs []llm.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		var parts []string
		for _, b := range m.Content {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		out = append(out, strings.Join(parts, "\n"))
	}
	return out
}

// dropUnanswered removes the user messages that end the conversation after
// a failed run (the model failed before answering them), from index start
// on, so that the next request does not carry two user messages in a row;
// it tells Config.OnDropPrompts how many it removed.
func (a *Agent) dropUnanswered(start int) {
	a.mu.Lock()
	n := 0
	for i := len(a.messages) - 1; i >= start && a.messages[i].Role == llm.RoleUser; i-- {
		n++
	}
	a.messages = a.messages[:len(a.messages)-n]
	a.mu.Unlock()
	if n > 0 && a.cfg.OnDropPrompts != nil {
		a.cfg.OnDropPrompts(n)
	}
}
