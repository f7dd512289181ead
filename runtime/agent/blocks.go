package agent

import (
	"strings"

	"github.com/pi-go/pi/runtime/llm"
)

// streamBlocks numbers the blocks of a streamed assistant message as the
// reference's contentIndex counts them (text, thinking and tool-call
// blocks in the order they began) and adds thinking_start and
// thinking_end around each run of thinking deltas, as the reference's
// stream has them. Providers send deltas only; a block ends when a delta
// of another block comes, or the stream ends.
type streamBlocks struct {
	n        int    // blocks begun
	open     string // "text", "thinking" or "" (none, or a call)
	index    int    // the open block's index
	thinking strings.Builder
	calls    map[int]int // a call's ToolCallIndex → its block's index
}

// event passes ev on through emit with its ContentIndex, and the
// thinking_start or thinking_end it implies first.
func (b *streamBlocks) event(ev llm.StreamEvent, emit func(llm.StreamEvent)) {
	switch ev.Type {
	case llm.EventThinkingDelta, llm.EventTextDelta:
		kind := "text"
		if ev.Type == llm.EventThinkingDelta {
			kind = "thinking"
		}
		if b.open != kind {
			b.close(emit)
			b.open, b.index = kind, b.begin()
			if kind == "thinking" {
				b.thinking.Reset()
				emit(llm.StreamEvent{Type: llm.EventThinkingStart, ContentIndex: intp(b.index)})
			}
		}
		if kind == "thinking" {
			b.thinking.WriteString(ev.Delta)
		}
		ev.ContentIndex = intp(b.index)
	case llm.EventToolCallStart:
		b.close(emit)
		if b.calls == nil {
			b.calls = map[int]int{}
		}
		b.calls[ev.ToolCallIndex] = b.begin()
		ev.ContentIndex = intp(b.calls[ev.ToolCallIndex])
	case llm.EventToolCallDelta:
		b.close(emit)
		if i, ok := b.calls[ev.ToolCallIndex]; ok {
			ev.ContentIndex = intp(i)
		}
	}
	emit(ev)
}

// close ends the open block: thinking_end with the block's text for a
// thinking block.
func (b *streamBlocks) close(emit func(llm.StreamEvent)) {
	if b.open == "thinking" {
		emit(llm.StreamEvent{Type: llm.EventThinkingEnd, ContentIndex: intp(b.index), Content: b.thinking.String()})
	}
	b.open = ""
}

func (b *streamBlocks) begin() int {
	b.n++
	return b.n - 1
}

func intp(i int) *int { return &i }
