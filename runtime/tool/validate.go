package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pi-go/pi/internal/jsonschema"
)

// ValidationError is the model-visible failure of argument validation:
// `Validation failed for tool "NAME":` then one `  - FIELD: MESSAGE` line per
// problem, then the arguments that were received.
type ValidationError struct {
	Tool     string
	Problems []FieldProblem
	Received json.RawMessage
}

// FieldProblem is one field that failed validation. Field is a slash path
// into the arguments ("edits/0/oldText"), or "root".
type FieldProblem struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Validation failed for tool %q:", e.Tool)
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  - %s: %s", p.Field, p.Message)
	}
	if len(e.Received) > 0 {
		var pretty bytes.Buffer
		if json.Indent(&pretty, e.Received, "", "  ") == nil {
			b.WriteString("\n\nReceived arguments:\n")
			b.Write(pretty.Bytes())
		}
	}
	return b.String()
}

type validator struct {
	tool       string
	schemaJSON json.RawMessage
	schema     *jsonschema.Schema
}

// compileSchema compiles a tool's parameter schema (draft 2020-12 unless
// it names another $schema). An empty schema means an object with any
// properties.
func compileSchema(toolName string, raw json.RawMessage) (*validator, error) {
	return compileSchemaDraft(toolName, raw, jsonschema.Draft2020)
}

// compileSchemaDraft is compileSchema with another default draft (tests
// compare drafts).
func compileSchemaDraft(toolName string, raw json.RawMessage, draft jsonschema.Draft) (*validator, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	doc, ok := parseTree(raw)
	if !ok {
		var err error
		if doc, err = jsonschema.Unmarshal(raw); err != nil {
			return nil, fmt.Errorf("parameters are not JSON: %w", err)
		}
	}
	if m, ok := doc.(map[string]any); !ok || (m["type"] != nil && m["type"] != "object") {
		return nil, fmt.Errorf("parameters must be a JSON Schema of type object")
	}
	// A schema comes from an extension or an MCP server: a $ref to a file
	// or URL is refused, never loaded ($ref "file:///dev/zero").
	s, err := jsonschema.Compile(doc, jsonschema.Options{URL: "pi:tool/" + toolName + ".json", DefaultDraft: draft, Owner: "a tool's schema"})
	if err != nil {
		return nil, fmt.Errorf("parameters schema: %w", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, fmt.Errorf("parameters are not JSON: %w", err)
	}
	return &validator{tool: toolName, schemaJSON: compact.Bytes(), schema: s}, nil
}

// validate checks args against the schema and returns them with the value
// it parsed (Args), for the call's Paths and Execute. The arguments are
// parsed once, straight from args (parseTree); what parseTree leaves to
// encoding/json (invalid JSON, duplicate keys) takes jsonschema.Unmarshal,
// so its errors are encoding/json's, and that parse is not handed on (a
// struct decode must see what encoding/json sees). The validator never
// copies a string of the arguments.
func (v *validator) validate(args json.RawMessage) (Args, error) {
	inst, ok := parseTree(args)
	if !ok {
		var err error
		inst, err = jsonschema.Unmarshal(args)
		if err != nil {
			return Args{}, &ValidationError{Tool: v.tool, Problems: []FieldProblem{{Field: "root", Message: "arguments are not valid JSON: " + err.Error()}}}
		}
	}
	err := v.schema.Validate(inst)
	if err == nil {
		if !ok {
			return RawArgs(args), nil
		}
		return Args{JSON: args, value: inst, parsed: true}, nil
	}
	ve, ok := err.(*jsonschema.Error)
	if !ok {
		return Args{}, &ValidationError{Tool: v.tool, Problems: []FieldProblem{{Field: "root", Message: err.Error()}}, Received: args}
	}
	var problems []FieldProblem
	for _, leaf := range ve.Leaves() {
		problems = appendProblems(problems, leaf)
	}
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].Field < problems[j].Field })
	return Args{}, &ValidationError{Tool: v.tool, Problems: dedupe(problems), Received: args}
}

// appendProblems adds the problems of one leaf of the error tree: one per
// missing or unexpected property, else one at the leaf's field.
func appendProblems(out []FieldProblem, e *jsonschema.Error) []FieldProblem {
	field := strings.Join(e.InstanceLocation, "/")
	switch k := e.Kind.(type) {
	case *jsonschema.Required:
		for _, m := range k.Missing {
			out = append(out, FieldProblem{Field: joinField(field, m), Message: fmt.Sprintf("must have required property '%s'", m)})
		}
		return out
	case *jsonschema.AdditionalProperties:
		for _, p := range k.Properties {
			out = append(out, FieldProblem{Field: joinField(field, p), Message: "is not an allowed property"})
		}
		return out
	}
	if field == "" {
		field = "root"
	}
	return append(out, FieldProblem{Field: field, Message: problemMessage(e.Kind)})
}

func joinField(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "/" + name
}

// problemMessage words a problem as the reference agent's AJV does where
// pi matches it, else as the validator does.
func problemMessage(k jsonschema.Kind) string {
	switch k := k.(type) {
	case *jsonschema.Type:
		return fmt.Sprintf("must be %s (got %s)", strings.Join(k.Want, " or "), k.Got)
	case *jsonschema.MinItems:
		return fmt.Sprintf("must NOT have fewer than %d items", k.Want)
	case *jsonschema.MaxItems:
		return fmt.Sprintf("must NOT have more than %d items", k.Want)
	case *jsonschema.MinLength:
		return fmt.Sprintf("must NOT have fewer than %d characters", k.Want)
	}
	if msg := k.Message(); msg != "" {
		return msg
	}
	return "is invalid"
}

func dedupe(ps []FieldProblem) []FieldProblem {
	out := ps[:0]
	for i, p := range ps {
		if i > 0 && p == ps[i-1] {
			continue
		}
		out = append(out, p)
	}
	return out
}
