package llm

import (
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// chunkDecoder decodes the chat completion chunks a stream is made of
// without encoding/json's reflection: a stream of a few hundred chunks a
// turn spent most of its decoding time finding struct fields by
// reflection. It takes the shapes servers send — the members of
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
	data    []byte
	i       int
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
	d.data, d.i = data, 0
	d.space()
	ok := d.chunk(c)
	d.space()
	d.data = nil
	return ok && d.i == len(data)
}

func (d *chunkDecoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// consume skips space, then takes byte b if it is next.
func (d *chunkDecoder) consume(b byte) bool {
	d.space()
	if d.i < len(d.data) && d.data[d.i] == b {
		d.i++
		return true
	}
	return false
}

// null takes a null literal if one is next (after space).
func (d *chunkDecoder) null() bool {
	d.space()
	if len(d.data)-d.i >= 4 && string(d.data[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// object decodes an object, calling member with each key's index among
// keys (-1 for a key that is none of them) until member returns false. A
// key given twice, one that has an escape or a byte outside printable
// ASCII, or one that is a known key in other letter case (which
// encoding/json would take for it) fails; a key that is none of them has
// its value skipped. A null object is taken and member not called.
func (d *chunkDecoder) object(keys []string, member func(k int) bool) bool {
	if d.null() {
		return true
	}
	if !d.consume('{') {
		return false
	}
	if d.consume('}') {
		return true
	}
	var seen uint64
	for {
		if !d.consume('"') {
			return false
		}
		start := d.i
		for d.i < len(d.data) && d.data[d.i] != '"' {
			if c := d.data[d.i]; c < 0x20 || c > 0x7e || c == '\\' {
				return false
			}
			d.i++
		}
		if d.i == len(d.data) {
			return false
		}
		key := d.data[start:d.i]
		d.i++
		if !d.consume(':') {
			return false
		}
		k := -1
		for n, name := range keys {
			if string(key) == name {
				k = n
				break
			}
			if equalFoldASCII(key, name) {
				return false
			}
		}
		if k >= 0 {
			if seen&(1<<k) != 0 {
				return false
			}
			seen |= 1 << k
			if !member(k) {
				return false
			}
		} else if !d.skip(0) {
			return false
		}
		if d.consume(',') {
			continue
		}
		return d.consume('}')
	}
}

// equalFoldASCII reports whether a and b (ASCII) are equal but for the
// case of their letters.
func equalFoldASCII(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// array decodes an array, calling elem for each element until it returns
// false. A null array is taken with null set.
func (d *chunkDecoder) array(elem func() bool) (isNull, ok bool) {
	if d.null() {
		return true, true
	}
	if !d.consume('[') {
		return false, false
	}
	if d.consume(']') {
		return false, true
	}
	for {
		if !elem() {
			return false, false
		}
		if d.consume(',') {
			continue
		}
		return false, d.consume(']')
	}
}

// literal returns the JSON string literal next (quotes included) and
// whether it holds an escape or a byte outside ASCII; ok is false when
// what is next is not a valid string literal.
func (d *chunkDecoder) literal() (lit []byte, plain, ok bool) {
	d.space()
	if d.i >= len(d.data) || d.data[d.i] != '"' {
		return nil, false, false
	}
	start := d.i
	plain = true
	for i := d.i + 1; i < len(d.data); {
		c := d.data[i]
		switch {
		case c == '"':
			d.i = i + 1
			return d.data[start:d.i], plain, true
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			plain = false
			if i+1 >= len(d.data) {
				return nil, false, false
			}
			switch d.data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if getu4(d.data[i:]) < 0 {
					return nil, false, false
				}
				i += 6
			default:
				return nil, false, false
			}
		default:
			if c >= utf8.RuneSelf {
				plain = false
			}
			i++
		}
	}
	return nil, false, false
}

// str decodes a string (null leaves *s as it is). slot >= 0 names the
// last string to reuse when the text is the same.
func (d *chunkDecoder) str(s *string, slot int) bool {
	if d.null() {
		return true
	}
	lit, plain, ok := d.literal()
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

// integer decodes a number that is a plain integer of up to 18 digits
// (what encoding/json takes into an int without overflow); any other
// number fails, and is left to encoding/json.
func (d *chunkDecoder) integer() (n int, ok bool) {
	d.space()
	i := d.i
	neg := i < len(d.data) && d.data[i] == '-'
	if neg {
		i++
	}
	start := i
	for i < len(d.data) && '0' <= d.data[i] && d.data[i] <= '9' {
		n = n*10 + int(d.data[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 18 || digits > 1 && d.data[start] == '0' {
		return 0, false
	}
	if i < len(d.data) {
		switch d.data[i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	d.i = i
	if neg {
		n = -n
	}
	return n, true
}

// skip takes any JSON value, checking it as encoding/json's scanner does.
func (d *chunkDecoder) skip(depth int) bool {
	if depth > 100 {
		return false
	}
	d.space()
	if d.i >= len(d.data) {
		return false
	}
	switch c := d.data[d.i]; {
	case c == '"':
		_, _, ok := d.literal()
		return ok
	case c == '{':
		d.i++
		if d.consume('}') {
			return true
		}
		for {
			if _, _, ok := d.literal(); !ok || !d.consume(':') || !d.skip(depth+1) {
				return false
			}
			if d.consume(',') {
				continue
			}
			return d.consume('}')
		}
	case c == '[':
		_, ok := d.array(func() bool { return d.skip(depth + 1) })
		return ok
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	for _, lit := range []string{"true", "false", "null"} {
		if len(d.data)-d.i >= len(lit) && string(d.data[d.i:d.i+len(lit)]) == lit {
			d.i += len(lit)
			return true
		}
	}
	return false
}

// number takes a JSON number.
func (d *chunkDecoder) number() bool {
	digits := func() int {
		n := 0
		for d.i < len(d.data) && '0' <= d.data[d.i] && d.data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.data[d.i] == '-' {
		d.i++
	}
	if d.i < len(d.data) && d.data[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return false
	}
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return false
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return false
		}
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
	if d.null() {
		return false // encoding/json takes it as nothing; rare enough
	}
	return d.object(chunkKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&c.ID, lastID)
		case 1:
			return d.str(&c.Object, lastObject)
		case 2:
			if d.null() {
				return true
			}
			n, ok := d.integer()
			c.Created = int64(n)
			return ok
		case 3:
			return d.str(&c.Model, lastModel)
		case 4:
			start := len(d.choices)
			isNull, ok := d.array(func() bool {
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
			return d.null()
		}
	})
}

// space0 skips space and reports whether an object (not null) is next:
// a null element of an array is left to encoding/json.
func (d *chunkDecoder) space0() bool {
	d.space()
	return d.i < len(d.data) && d.data[d.i] == '{'
}

func (d *chunkDecoder) choice(ch *streamChoice) bool {
	return d.object(choiceKeys, func(k int) bool {
		switch k {
		case 0:
			if d.null() {
				return true
			}
			n, ok := d.integer()
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
			return d.null()
		}
	})
}

func (d *chunkDecoder) delta(dl *streamDelta) bool {
	return d.object(deltaKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&dl.Content, -1)
		case 1:
			return d.str(&dl.Role, lastRole)
		case 2:
			return d.null() // a function call: encoding/json's
		case 3:
			start := len(d.calls)
			isNull, ok := d.array(func() bool {
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
	return d.object(toolCallKeys, func(k int) bool {
		switch k {
		case 0:
			if d.null() {
				return true
			}
			n, ok := d.integer()
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
			return d.object(functionKeys, func(k int) bool {
				if k == 0 {
					return d.str(&tc.Function.Name, -1)
				}
				if d.null() {
					return true
				}
				lit, _, ok := d.literal()
				tc.Function.Arguments = lit
				return ok
			})
		}
	})
}
