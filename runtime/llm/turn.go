package llm

import (
	"strconv"
	"strings"

	"github.com/pi-go/pi/runtime/content"
)

// turn assembles one assistant message from a stream of content blocks
// (the native APIs: Anthropic's content blocks, Responses' output items,
// Gemini's parts): text and thinking blocks in order, tool calls in
// order, and emits the events. Argument text goes into the calls' blocks
// (callState) and is never copied on the way.
type turn struct {
	parts    []*partState
	calls    []*callState
	usage    Usage
	stop     StopReason
	emitted  bool
	emit     func(StreamEvent)
	redactor *streamRedactor
}

// partState is a text or thinking block being assembled.
type partState struct {
	thinking bool
	text     strings.Builder
	sig      strings.Builder
	redacted bool
}

// Keys of the redactor's streams other than the calls' (0, 1, ...).
const (
	textStream     = -1
	thinkingStream = -2
)

func newTurn(emit func(StreamEvent), t *transport) *turn {
	return &turn{emit: emit, redactor: newStreamRedactor(t.redactor)}
}

func (t *turn) send(ev StreamEvent) {
	t.emitted = true
	if t.emit != nil {
		t.emit(ev)
	}
}

// startText starts a text block.
func (t *turn) startText() *partState {
	t.flushParts()
	p := &partState{}
	t.parts = append(t.parts, p)
	return p
}

// startThinking starts a thinking block.
func (t *turn) startThinking() *partState {
	t.flushParts()
	p := &partState{thinking: true}
	t.parts = append(t.parts, p)
	return p
}

// lastPart returns the last block if it is of the kind asked, else starts
// one.
func (t *turn) lastPart(thinking bool) *partState {
	if n := len(t.parts); n > 0 && t.parts[n-1].thinking == thinking && !t.parts[n-1].redacted {
		return t.parts[n-1]
	}
	if thinking {
		return t.startThinking()
	}
	return t.startText()
}

// add appends s to p and emits its delta.
func (t *turn) add(p *partState, s string) {
	if s == "" {
		return
	}
	p.text.WriteString(s)
	typ, key := EventTextDelta, textStream
	if p.thinking {
		typ, key = EventThinkingDelta, thinkingStream
	}
	if out := t.redactor.write(key, s); out != "" {
		t.send(StreamEvent{Type: typ, Delta: out})
	}
}

// startCall starts a tool call and emits toolcall_start.
func (t *turn) startCall(id, name string) *callState {
	t.flushParts()
	c := &callState{ID: id, Name: name, pos: len(t.calls)}
	t.calls = append(t.calls, c)
	t.send(StreamEvent{Type: EventToolCallStart, ToolCallIndex: c.pos, ToolCallID: id, ToolName: name})
	return c
}

// args appends argument text to c and emits toolcall_delta.
func (t *turn) args(c *callState, delta string) {
	if len(delta) == 0 {
		return
	}
	writeArgs(c, delta)
	t.argsEvent(c, delta)
}

// wholeArgs makes args (a call that comes whole) c's arguments, without
// a copy, and emits toolcall_delta.
func (t *turn) wholeArgs(c *callState, args []byte) {
	c.blocks, c.size = [][]byte{args}, len(args)
	t.argsEvent(c, string(args))
}

// argsEvent emits toolcall_delta for argument text added to c.
func (t *turn) argsEvent(c *callState, delta string) {
	if out := t.redactor.write(c.pos, delta); out != "" {
		t.send(StreamEvent{Type: EventToolCallDelta, Delta: out, ToolCallIndex: c.pos, ToolCallID: c.ID, ToolName: c.Name})
	}
}

// flushParts emits what the redactor held back of the text and thinking
// blocks, so a block's last delta comes before the next block's first.
func (t *turn) flushParts() {
	if out := t.redactor.flush(thinkingStream); out != "" {
		t.send(StreamEvent{Type: EventThinkingDelta, Delta: out})
	}
	if out := t.redactor.flush(textStream); out != "" {
		t.send(StreamEvent{Type: EventTextDelta, Delta: out})
	}
}

// flush emits what the redactor held back.
func (t *turn) flush() {
	t.flushParts()
	for _, c := range t.calls {
		if out := t.redactor.flush(c.pos); out != "" {
			t.send(StreamEvent{Type: EventToolCallDelta, Delta: out, ToolCallIndex: c.pos, ToolCallID: c.ID, ToolName: c.Name})
		}
	}
}

// response returns the assembled turn. stop, when set, replaces the
// stop reason the stream gave; an aborted turn has no calls (they may be
// cut short). Text and arguments are what the model sent: redaction is
// for the events only.
func (t *turn) response(stop StopReason) *Response {
	t.flush()
	m := Message{Role: RoleAssistant}
	for _, p := range t.parts {
		switch {
		case p.thinking:
			b := content.Thinking(p.text.String(), p.sig.String())
			b.Redacted = p.redacted
			m.Content = append(m.Content, b)
		case p.text.Len() > 0:
			m.Content = append(m.Content, content.Text(p.text.String()))
		}
	}
	if stop == "" {
		stop = t.stop
	}
	if stop == "" {
		stop = StopEnd
	}
	if stop == StopEnd && len(t.calls) > 0 {
		stop = StopToolUse
	}
	if stop != StopAborted {
		for n, c := range t.calls {
			tc := ToolCall{ID: c.ID, Name: c.Name, Arguments: c.arguments(), ThoughtSignature: c.sig}
			if tc.ID == "" {
				tc.ID = "call_" + strconv.Itoa(n+1)
			}
			m.ToolCalls = append(m.ToolCalls, tc)
		}
	}
	u := t.usage
	u.TotalTokens = u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
	return &Response{Message: m, Usage: u, StopReason: stop}
}
