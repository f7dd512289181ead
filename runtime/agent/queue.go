package agent

import "github.com/pi-go/pi/runtime/llm"

// This file is the steering queue: messages a person sends while a run is
// in progress (the interactive front end's "queued message").

// Steer queues a user message for the run in progress. The loop adds it to
// the conversation after the current tool batch, before the next model
// turn; when the model answers without calling tools, the run goes on with
// it instead of ending. It reports false when no run takes messages (none
// is running, or the running one has ended its last turn): send the
// message with Prompt then. A message queued but not delivered (the run
// was aborted, failed or reached MaxTurns) comes back in RunResult.Unsent.
func (a *Agent) Steer(m llm.Message) bool {
	if m.Role == "" {
		m.Role = llm.RoleUser
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.running || !a.accepting {
		return false
	}
	a.queue = append(a.queue, m)
	return true
}

// Queued returns how many steered messages wait for delivery.
func (a *Agent) Queued() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.queue)
}

// deliverQueued adds the queued messages to the conversation and emits
// message_start and message_end for each. final says the model has
// answered without calling tools: with nothing queued the run then stops
// taking messages, in the same critical section, so that a Steer racing
// with the end of the run either is delivered or reports false.
func (a *Agent) deliverQueued(final bool) bool {
	a.mu.Lock()
	q := a.queue
	a.queue = nil
	if len(q) == 0 && final {
		a.accepting = false
	}
	a.messages = append(a.messages, q...)
	a.mu.Unlock()
	for i := range q {
		a.emit(Event{Type: EventMessageStart, Message: &q[i]})
		a.emit(Event{Type: EventMessageEnd, Message: &q[i]})
	}
	return len(q) > 0
}

// closeQueue stops taking messages and returns those not delivered. The
// caller holds a.mu.
func (a *Agent) closeQueue() []llm.Message {
	a.accepting = false
	q := a.queue
	a.queue = nil
	return q
}
