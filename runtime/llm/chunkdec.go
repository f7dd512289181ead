package llm

import (
	openai "github.com/sashabaranov/go-openai"

	"github.com/pi-go/pi/internal/jsonscan"
)

// chunkDecoder decodes the chat completion chunks a stream is made of
// (with internal/jsonscan) without encoding/json's reflection: a stream
// of a few hundred chunks a turn spent most of its decoding time finding
// struct fields by reflection. It takes the shapes servers send — the members of
// streamChunk, null for any of them, and members it does not know, which
// it skips — and declines everything else (a usage, an error object,
// logprobs, a member named like a known one in other letter case, a
// member given twice, a number that is not a plain integer): those go to
// encoding/json as before. What it decodes is what encoding/json decodes
// into a streamChunk, member for member (FuzzChunkDecoder), including
// which input is not JSON at all.
//
// The slices of a decoded chunk are the decoder's own, reused by the next
// chunk; the strings are new, except the members that are the same in
// every chunk (id, object, model, role, type, finish reason), which are
// the previous chunk's when their text is the same.
type chunkDecoder struct {
	s       jsonscan.Scanner
	choices []streamChoice
	calls   []streamToolCall
	indexes []int
	// last holds the repeated members' previous strings.
	last    [6]string
	scratch []byte
}

// Slots of chunkDecoder.last.
const (
	lastID = iota
	lastObject
	lastModel
	lastFingerprint
	lastRole
	lastFinish
)

// decode decodes data into c, which must be zero, and reports whether it
// did; when it did not, c is to be dropped and data decoded by
// encoding/json.
func (d *chunkDecoder) decode(data []byte, c *streamChunk) bool {
	d.s.Reset(data)
	ok := d.chunk(c) && d.s.End()
	d.s.Reset(nil)
	return ok
}

// str decodes a string (null leaves *s as it is). slot >= 0 names the
// last string to reuse when the text is the same.
func (d *chunkDecoder) str(s *string, slot int) bool {
	if d.s.Null() {
		return true
	}
	lit, plain, ok := d.s.Literal()
	if !ok {
		return false
	}
	text := lit[1 : len(lit)-1]
	if !plain {
		d.scratch, _ = appendUnquoted(d.scratch[:0], lit)
		text = d.scratch
	}
	if slot >= 0 && d.last[slot] == string(text) {
		*s = d.last[slot]
		return true
	}
	*s = string(text)
	if slot >= 0 {
		d.last[slot] = *s
	}
	return true
}

// The members the decoder knows, in streamChunk's order; the ones it
// declines when they are not null are decoded as null or fail.
var (
	chunkKeys    = []string{"id", "object", "created", "model", "choices", "system_fingerprint", "prompt_annotations", "prompt_filter_results", "usage", "error"}
	choiceKeys   = []string{"index", "delta", "logprobs", "finish_reason", "content_filter_results"}
	deltaKeys    = []string{"content", "role", "function_call", "tool_calls", "refusal", "reasoning_content", "reasoning", "reasoning_text"}
	toolCallKeys = []string{"index", "id", "type", "function"}
	functionKeys = []string{"name", "arguments"}
)

func (d *chunkDecoder) chunk(c *streamChunk) bool {
	d.choices, d.calls, d.indexes = d.choices[:0], d.calls[:0], d.indexes[:0]
	if d.s.Null() {
		return false // encoding/json takes it as nothing; rare enough
	}
	return d.s.Object(chunkKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&c.ID, lastID)
		case 1:
			return d.str(&c.Object, lastObject)
		case 2:
			if d.s.Null() {
				return true
			}
			n, ok := d.s.Integer()
			c.Created = int64(n)
			return ok
		case 3:
			return d.str(&c.Model, lastModel)
		case 4:
			start := len(d.choices)
			isNull, ok := d.s.Array(func() bool {
				d.choices = append(d.choices, streamChoice{})
				return d.space0() && d.choice(&d.choices[len(d.choices)-1])
			})
			if !isNull {
				c.Choices = d.choices[start:len(d.choices):len(d.choices)]
			}
			return ok
		case 5:
			return d.str(&c.SystemFingerprint, lastFingerprint)
		case 9:
			return false // an error object: encoding/json's RawMessage
		default:
			// prompt annotations, filter results, usage: only null.
			return d.s.Null()
		}
	})
}

// space0 reports whether an object (not null) is next: a null element
// of an array is left to encoding/json.
func (d *chunkDecoder) space0() bool { return d.s.Peek() == '{' }

func (d *chunkDecoder) choice(ch *streamChoice) bool {
	return d.s.Object(choiceKeys, func(k int) bool {
		switch k {
		case 0:
			if d.s.Null() {
				return true
			}
			n, ok := d.s.Integer()
			ch.Index = n
			return ok
		case 1:
			return d.delta(&ch.Delta)
		case 3:
			s := string(ch.FinishReason)
			ok := d.str(&s, lastFinish)
			ch.FinishReason = openai.FinishReason(s)
			return ok
		default:
			// logprobs, content filter results: only null.
			return d.s.Null()
		}
	})
}

func (d *chunkDecoder) delta(dl *streamDelta) bool {
	return d.s.Object(deltaKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&dl.Content, -1)
		case 1:
			return d.str(&dl.Role, lastRole)
		case 2:
			return d.s.Null() // a function call: encoding/json's
		case 3:
			start := len(d.calls)
			isNull, ok := d.s.Array(func() bool {
				d.calls = append(d.calls, streamToolCall{})
				return d.space0() && d.toolCall(&d.calls[len(d.calls)-1])
			})
			if !isNull {
				dl.ToolCalls = d.calls[start:len(d.calls):len(d.calls)]
			}
			return ok
		case 4:
			return d.str(&dl.Refusal, -1)
		case 5:
			return d.str(&dl.ReasoningContent, -1)
		case 6:
			return d.str(&dl.Reasoning, -1)
		default:
			return d.str(&dl.ReasoningText, -1)
		}
	})
}

func (d *chunkDecoder) toolCall(tc *streamToolCall) bool {
	return d.s.Object(toolCallKeys, func(k int) bool {
		switch k {
		case 0:
			if d.s.Null() {
				return true
			}
			n, ok := d.s.Integer()
			if ok {
				// The index points into the decoder's own ints: a new
				// int for each call would be the chunk's only other
				// allocation.
				if len(d.indexes) == cap(d.indexes) {
					d.indexes = make([]int, 0, max(8, 2*cap(d.indexes)))
				}
				d.indexes = append(d.indexes, n)
				tc.Index = &d.indexes[len(d.indexes)-1]
			}
			return ok
		case 1:
			return d.str(&tc.ID, -1)
		case 2:
			s := string(tc.Type)
			ok := d.str(&s, -1)
			tc.Type = openai.ToolType(s)
			return ok
		default:
			return d.s.Object(functionKeys, func(k int) bool {
				if k == 0 {
					return d.str(&tc.Function.Name, -1)
				}
				if d.s.Null() {
					return true
				}
				lit, _, ok := d.s.Literal()
				tc.Function.Arguments = lit
				return ok
			})
		}
	})
}
