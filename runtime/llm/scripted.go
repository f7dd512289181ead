package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/pi-go/pi/internal/jsonscan"
	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/content"
)

// Script is a recorded conversation for the scripted provider: each Stream
// call plays the next turn. Its JSON form is
//
//	{"turns":[
//	  {"text":"..."},
//	  {"toolCalls":[{"name":"read","arguments":{"path":"a.txt"}}]},
//	  {"text":"...","toolCalls":[{"id":"x","name":"bash","arguments":{"command":"ls"}}]}
//	]}
type Script struct {
	Turns []ScriptTurn `json:"turns"`
}

// ScriptTurn is one assistant turn of a Script.
type ScriptTurn struct {
	// Text is the assistant's text, streamed in a few deltas.
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls the assistant makes this turn.
	ToolCalls []ScriptToolCall `json:"toolCalls,omitempty"`
	// StopReason overrides the stop reason ("stop", "toolUse", "length");
	// empty means toolUse when there are tool calls, else stop.
	StopReason StopReason `json:"stopReason,omitempty"`
	// Error, when set, makes this turn fail with that message instead of
	// answering (for testing how the loop handles provider errors).
	Error string `json:"error,omitempty"`
	// Usage is reported as the turn's token usage.
	Usage *Usage `json:"usage,omitempty"`
}

// ScriptToolCall is one tool call of a ScriptTurn.
type ScriptToolCall struct {
	// ID is the call id; empty means "call_N", N counting the script's calls
	// from 1 in order.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is the JSON object of arguments. A JSON string is taken as
	// the raw argument text itself, so a script can send invalid JSON.
	// Missing means "{}".
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ErrScriptEnded is returned (wrapped) by Scripted.Stream when every turn of
// the script has been played.
var ErrScriptEnded = errors.New("script ended")

// LoadScript reads and parses a script file (see ParseScript).
//
// # Errors
//
// It fails when the file cannot be read or does not parse; the error names
// the path.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("load script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return Script{}, fmt.Errorf("load script %s: %w", path, err)
	}
	return s, nil
}

// ParseScript decodes a script from its JSON form, strictly: unknown fields,
// trailing data, a tool call without a name, arguments that are neither an
// object nor a string, and an unknown stopReason are errors. The calls'
// Arguments share data (a 20 MB argument is not copied); data must not
// change afterwards.
//
// # Errors
//
// Errors name the turn index and the field, e.g.
// `parse script: turns[2].toolCalls[0].name: missing`.
func ParseScript(data []byte) (Script, error) {
	if s, ok := parseScriptInPlace(data); ok {
		return s, nil
	}
	return decodeScript(data)
}

// decodeScript is ParseScript with encoding/json's decoder, level by
// level, so that every error names where it is.
func decodeScript(data []byte) (Script, error) {
	var top struct {
		Turns []json.RawMessage `json:"turns"`
	}
	if err := decodeStrict(data, &top); err != nil {
		return Script{}, fmt.Errorf("parse script: %w", err)
	}
	if top.Turns == nil {
		return Script{}, errors.New(`parse script: turns: missing (want {"turns":[...]})`)
	}
	s := Script{Turns: make([]ScriptTurn, 0, len(top.Turns))}
	for i, raw := range top.Turns {
		turn, err := parseTurn(raw)
		if err != nil {
			return Script{}, fmt.Errorf("parse script: turns[%d]%w", i, err)
		}
		s.Turns = append(s.Turns, turn)
	}
	return s, nil
}

// fieldError is an error about one field path; its message starts with the
// path suffix (".toolCalls[0].name: ...") so callers can prefix the rest.
type fieldError struct {
	path string
	err  error
}

func (e *fieldError) Error() string { return e.path + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

func parseTurn(raw json.RawMessage) (ScriptTurn, error) {
	var t struct {
		Text       string            `json:"text"`
		ToolCalls  []json.RawMessage `json:"toolCalls"`
		StopReason StopReason        `json:"stopReason"`
		Error      string            `json:"error"`
		Usage      *Usage            `json:"usage"`
	}
	if err := decodeStrict(raw, &t); err != nil {
		return ScriptTurn{}, &fieldError{"", err}
	}
	switch t.StopReason {
	case "", StopEnd, StopToolUse, StopLength:
	default:
		return ScriptTurn{}, &fieldError{".stopReason", fmt.Errorf("unknown value %q (want stop, toolUse or length)", t.StopReason)}
	}
	turn := ScriptTurn{Text: t.Text, StopReason: t.StopReason, Error: t.Error, Usage: t.Usage}
	for j, rc := range t.ToolCalls {
		var c ScriptToolCall
		if err := decodeStrict(rc, &c); err != nil {
			return ScriptTurn{}, &fieldError{fmt.Sprintf(".toolCalls[%d]", j), err}
		}
		if c.Name == "" {
			return ScriptTurn{}, &fieldError{fmt.Sprintf(".toolCalls[%d].name", j), errors.New("missing")}
		}
		if len(c.Arguments) > 0 {
			switch c.Arguments[0] {
			case '{', '"':
			default:
				return ScriptTurn{}, &fieldError{fmt.Sprintf(".toolCalls[%d].arguments", j),
					fmt.Errorf("want a JSON object or a string, got %s", abbreviate(string(c.Arguments), 40))}
			}
		}
		turn.ToolCalls = append(turn.ToolCalls, c)
	}
	return turn, nil
}

// errNotInPlace makes parseScriptInPlace leave a script to ParseScript's
// decoder.
var errNotInPlace = errors.New("not parsed in place")

// parseScriptInPlace parses a well-formed script whose keys are spelled
// exactly and never repeated, taking each call's arguments as the span of
// data they occupy: no copy, where the decoder would copy them at each of
// its three levels. Every other value is decoded as ParseScript's decoder
// decodes it. Anything else — invalid JSON, a key in another case, a
// repeated key, a null, a value ParseScript refuses — reports false, and
// ParseScript's decoder has the final word and the error texts.
func parseScriptInPlace(data []byte) (Script, bool) {
	if !json.Valid(data) {
		return Script{}, false
	}
	var s Script
	seen := map[string]bool{}
	err := jsonscan.Members(data, func(key, val []byte) error {
		if string(key) != "turns" || seen["turns"] || val[0] != '[' {
			return errNotInPlace
		}
		seen["turns"] = true
		return eachElement(val, func(turn []byte) error {
			t, err := parseTurnInPlace(turn)
			s.Turns = append(s.Turns, t)
			return err
		})
	})
	if err != nil || !seen["turns"] {
		return Script{}, false
	}
	if s.Turns == nil {
		s.Turns = []ScriptTurn{}
	}
	return s, true
}

// parseTurnInPlace is parseTurn for parseScriptInPlace.
func parseTurnInPlace(raw []byte) (ScriptTurn, error) {
	var t ScriptTurn
	seen := map[string]bool{}
	err := jsonscan.Members(raw, func(key, val []byte) error {
		k := string(key)
		if seen[k] || string(val) == "null" {
			return errNotInPlace
		}
		seen[k] = true
		switch k {
		case "text":
			return decodeStrict(val, &t.Text)
		case "stopReason":
			return decodeStrict(val, &t.StopReason)
		case "error":
			return decodeStrict(val, &t.Error)
		case "usage":
			return decodeStrict(val, &t.Usage)
		case "toolCalls":
			if val[0] != '[' {
				return errNotInPlace
			}
			return eachElement(val, func(call []byte) error {
				c, err := parseCallInPlace(call)
				t.ToolCalls = append(t.ToolCalls, c)
				return err
			})
		}
		return errNotInPlace
	})
	if err != nil {
		return t, err
	}
	switch t.StopReason {
	case "", StopEnd, StopToolUse, StopLength:
	default:
		return t, errNotInPlace
	}
	return t, nil
}

// parseCallInPlace decodes one tool call of parseTurnInPlace; Arguments is
// the span of raw.
func parseCallInPlace(raw []byte) (ScriptToolCall, error) {
	var c ScriptToolCall
	seen := map[string]bool{}
	err := jsonscan.Members(raw, func(key, val []byte) error {
		k := string(key)
		if seen[k] || string(val) == "null" {
			return errNotInPlace
		}
		seen[k] = true
		switch k {
		case "id":
			return decodeStrict(val, &c.ID)
		case "name":
			return decodeStrict(val, &c.Name)
		case "arguments":
			if val[0] != '{' && val[0] != '"' {
				return errNotInPlace
			}
			c.Arguments = val
			return nil
		}
		return errNotInPlace
	})
	if err == nil && c.Name == "" {
		err = errNotInPlace
	}
	return c, err
}

// eachElement calls fn with each element of the JSON array arr (valid
// JSON), in order.
func eachElement(arr []byte, fn func(elem []byte) error) error {
	i := jsonscan.Space(arr, 1)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for i < len(arr) {
		end, err := jsonscan.Value(arr, i)
		if err != nil {
			return err
		}
		if err := fn(arr[i:end]); err != nil {
			return err
		}
		i = jsonscan.Space(arr, end)
		if i < len(arr) && arr[i] == ']' {
			return nil
		}
		i = jsonscan.Space(arr, i+1) // the comma
	}
	return errNotInPlace
}

// decodeStrict decodes one JSON value into v, rejecting unknown fields and
// trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty input")
		}
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Scripted is a Provider that plays a Script: each Stream call answers with
// the next turn. It records the requests it received. It is safe for
// concurrent use; concurrent calls take turns in the order they lock.
type Scripted struct {
	mu       sync.Mutex
	turns    []ScriptTurn
	ids      [][]string // generated or given call ids, per turn
	next     int
	requests []Request
}

var _ Provider = (*Scripted)(nil)

// NewScripted returns a provider that plays s from its first turn.
func NewScripted(s Script) *Scripted {
	p := &Scripted{turns: s.Turns, ids: make([][]string, len(s.Turns))}
	n := 0
	for i, t := range s.Turns {
		for _, c := range t.ToolCalls {
			n++
			id := c.ID
			if id == "" {
				id = "call_" + strconv.Itoa(n)
			}
			p.ids[i] = append(p.ids[i], id)
		}
	}
	return p
}

// Stream plays the next turn: text as a few text_delta events, then each
// tool call as a toolcall_start and toolcall_delta events. The stop reason is
// toolUse when the turn has tool calls, else stop, unless the turn says
// otherwise. A cancelled ctx ends the turn with StopAborted and no error; the
// turn is not consumed if ctx was done before it started.
//
// # Errors
//
// When every turn has been played it returns an error wrapping
// ErrScriptEnded ("script ended after N turns"); a turn with an Error field
// fails with that message.
func (p *Scripted) Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (*Response, error) {
	p.mu.Lock()
	if ctx.Err() != nil {
		p.mu.Unlock()
		return &Response{Message: Message{Role: RoleAssistant}, StopReason: StopAborted}, nil
	}
	p.requests = append(p.requests, copyRequest(req))
	if p.next >= len(p.turns) {
		n := len(p.turns)
		p.mu.Unlock()
		return nil, fmt.Errorf("scripted provider: %w after %s", ErrScriptEnded, plural.Count(n, "turn"))
	}
	turn, ids := p.turns[p.next], p.ids[p.next]
	p.next++
	p.mu.Unlock()

	if turn.Error != "" {
		return nil, fmt.Errorf("scripted provider: %s", turn.Error)
	}
	emit := func(ev StreamEvent) {
		if onEvent != nil {
			onEvent(ev)
		}
	}
	msg := Message{Role: RoleAssistant}
	aborted := func() (*Response, error) {
		return &Response{Message: msg, StopReason: StopAborted}, nil
	}
	if turn.Text != "" {
		var sent string
		for _, d := range splitChunks(turn.Text, 3) {
			if ctx.Err() != nil {
				if sent != "" {
					msg.Content = []content.Block{content.Text(sent)}
				}
				return aborted()
			}
			sent += d
			emit(StreamEvent{Type: EventTextDelta, Delta: d})
		}
		msg.Content = []content.Block{content.Text(turn.Text)}
	}
	for i, c := range turn.ToolCalls {
		if ctx.Err() != nil {
			return aborted()
		}
		args := argumentText(c.Arguments)
		emit(StreamEvent{Type: EventToolCallStart, ToolCallIndex: i, ToolCallID: ids[i], ToolName: c.Name})
		for _, d := range splitBytes(args, 2) {
			emit(StreamEvent{Type: EventToolCallDelta, Delta: string(d), ToolCallIndex: i, ToolCallID: ids[i], ToolName: c.Name})
		}
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: ids[i], Name: c.Name, Arguments: args})
	}
	stop := turn.StopReason
	if stop == "" {
		stop = StopEnd
		if len(msg.ToolCalls) > 0 {
			stop = StopToolUse
		}
	}
	resp := &Response{Message: msg, StopReason: stop}
	if turn.Usage != nil {
		resp.Usage = *turn.Usage
	}
	return resp, nil
}

// Requests returns copies of the requests received so far, in order (for
// test assertions).
func (p *Scripted) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Request, len(p.requests))
	for i, r := range p.requests {
		out[i] = copyRequest(r)
	}
	return out
}

// Remaining returns how many turns have not been played yet.
func (p *Scripted) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.turns) - p.next
}

func copyRequest(r Request) Request {
	r.Messages = append([]Message(nil), r.Messages...)
	r.Tools = append([]ToolSpec(nil), r.Tools...)
	return r
}

// argumentText returns the raw argument text of a scripted call: a JSON
// string's content, the object compacted (the object itself, not a copy,
// when it has no white space to drop), or "{}" when missing.
func argumentText(raw json.RawMessage) RawArguments {
	if len(raw) == 0 {
		return RawArguments("{}")
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return RawArguments(s)
		}
	}
	if !jsonscan.HasSpace(raw) {
		return RawArguments(raw) // what json.Compact would return, or refuse
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.Bytes()
	}
	return RawArguments(raw)
}

// splitChunks splits s into at most n pieces of roughly equal size, on rune
// boundaries. An empty s gives no pieces.
func splitChunks(s string, n int) []string {
	if s == "" {
		return nil
	}
	runes := utf8.RuneCountInString(s)
	size := (runes + n - 1) / n
	if size < 1 {
		size = 1
	}
	var out []string
	start, count := 0, 0
	for i := range s {
		if count == size {
			out = append(out, s[start:i])
			start, count = i, 0
		}
		count++
	}
	return append(out, s[start:])
}

// splitBytes is splitChunks for bytes.
func splitBytes(b []byte, n int) [][]byte {
	if len(b) == 0 {
		return nil
	}
	size := max((utf8.RuneCount(b)+n-1)/n, 1)
	var out [][]byte
	start, count := 0, 0
	for i := 0; i < len(b); {
		if count == size {
			out = append(out, b[start:i])
			start, count = i, 0
		}
		_, w := utf8.DecodeRune(b[i:])
		i += w
		count++
	}
	return append(out, b[start:])
}

// abbreviate returns s cut to at most n bytes with "..." when longer.
func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
