package tool

import (
	"encoding/json"
	"sync"
	"unsafe"
)

// The pipeline parses a call's arguments once, to validate them, and keeps
// that parse (the JSON value: objects as map[string]any, numbers as
// json.Number) for the Paths and Execute of the same call, so a tool that
// decodes its arguments need not parse them again (a 20 MB write would
// otherwise be parsed and copied two or three times). The value is found by
// the identity of the argument bytes — the same slice, same start and
// length, that was validated — and the entry holds that slice, so its
// memory cannot be reused for other bytes while the entry exists. Argument
// bytes are never modified after validation (hooks that change arguments
// return new ones, which are validated again).
//
// Entries are dropped when the call's Execute returns, when Preflight
// turns the call away, and otherwise (a Validate with no call after it)
// once maxParsed newer ones exist.

// maxParsed bounds the entries kept for validations no call consumed.
const maxParsed = 16

// minParsed is the smallest input worth keeping: parsing a few hundred
// bytes again costs less than the bookkeeping.
const minParsed = 512

type parsedEntry struct {
	args json.RawMessage
	tree any
}

var parsed struct {
	mu      sync.Mutex
	entries []parsedEntry // oldest first
}

func sameBytes(a, b json.RawMessage) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// rememberParsed keeps tree as the parse of args.
func rememberParsed(args json.RawMessage, tree any) {
	if len(args) < minParsed {
		return
	}
	parsed.mu.Lock()
	defer parsed.mu.Unlock()
	for i, e := range parsed.entries {
		if sameBytes(e.args, args) {
			parsed.entries[i].tree = tree
			return
		}
	}
	if len(parsed.entries) >= maxParsed {
		copy(parsed.entries, parsed.entries[1:])
		parsed.entries[len(parsed.entries)-1] = parsedEntry{}
		parsed.entries = parsed.entries[:len(parsed.entries)-1]
	}
	parsed.entries = append(parsed.entries, parsedEntry{args: args, tree: tree})
}

// forgetParsed drops the parse of args, if kept.
func forgetParsed(args json.RawMessage) {
	if len(args) < minParsed {
		return
	}
	parsed.mu.Lock()
	defer parsed.mu.Unlock()
	for i, e := range parsed.entries {
		if sameBytes(e.args, args) {
			copy(parsed.entries[i:], parsed.entries[i+1:])
			parsed.entries[len(parsed.entries)-1] = parsedEntry{}
			parsed.entries = parsed.entries[:len(parsed.entries)-1]
			return
		}
	}
}

// Parsed returns the JSON value the pipeline's validation parsed from
// exactly these argument bytes (the same slice Paths or Execute was given),
// while the call is in flight: objects as map[string]any, arrays as []any,
// numbers as json.Number, as a json.Decoder with UseNumber makes them. It
// reports false when there is none (small or unvalidated arguments); the
// caller then decodes input itself. The value is shared: read it, never
// change it.
func Parsed(input json.RawMessage) (any, bool) {
	if len(input) < minParsed {
		return nil, false
	}
	parsed.mu.Lock()
	defer parsed.mu.Unlock()
	for _, e := range parsed.entries {
		if sameBytes(e.args, input) {
			return e.tree, true
		}
	}
	return nil, false
}
