package tool

import "encoding/json"

// Args are a call's arguments as validation hands them to the tool: the
// JSON text (as the model sent it, as PrepareArguments made it, or as a
// tool_call hook replaced it) and the JSON value validation parsed from
// exactly that text, so that the call's Paths and Execute need not parse
// it again (a 20 MB write would otherwise be parsed and copied two or
// three times). Preflight returns them; Execute takes them. Nothing else
// keeps the parse: it lives as long as the Args do.
type Args struct {
	// JSON is the arguments' text.
	JSON json.RawMessage
	// value is the parse of JSON when parsed is set.
	value  any
	parsed bool
}

// RawArgs are arguments no validation parsed (a tool run directly, or a
// test); Execute then decodes JSON itself.
func RawArgs(raw json.RawMessage) Args { return Args{JSON: raw} }

// Parsed returns the JSON value validation parsed from JSON: objects as
// map[string]any, arrays as []any, numbers as json.Number, as a
// json.Decoder with UseNumber makes them. It reports false when there is
// none (arguments that were not validated, or that validation left to
// encoding/json, as those with a duplicate key); the caller then decodes
// JSON itself. The value is shared: read it, never change it.
func (a Args) Parsed() (any, bool) { return a.value, a.parsed }
