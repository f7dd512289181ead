package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

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

// compileSchema compiles a tool's parameter schema. An empty schema means an
// object with any properties.
func compileSchema(toolName string, raw json.RawMessage) (*validator, error) {
	return compileSchemaDraft(toolName, raw, true)
}

// compileSchemaDraft is compileSchema; allowDraft6 false always compiles
// with the library's default draft (tests compare the two).
func compileSchemaDraft(toolName string, raw json.RawMessage, allowDraft6 bool) (*validator, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parameters are not JSON: %w", err)
	}
	if m, ok := doc.(map[string]any); !ok || (m["type"] != nil && m["type"] != "object") {
		return nil, fmt.Errorf("parameters must be a JSON Schema of type object")
	}
	c := jsonschema.NewCompiler()
	// A schema comes from an extension or an MCP server: a $ref to a file
	// or URL must not make pi read it ($ref "file:///dev/zero").
	c.UseLoader(noLoader{})
	if allowDraft6 && sameInDraft6(doc) {
		// The library copies every string instance to a byte slice for
		// draft 7+'s contentEncoding (20 MB more for a 20 MB write); a
		// schema that means the same in draft 6 is validated as draft 6.
		c.DefaultDraft(jsonschema.Draft6)
	}
	url := "pi:tool/" + toolName + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("parameters schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("parameters schema: %w", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, fmt.Errorf("parameters are not JSON: %w", err)
	}
	return &validator{tool: toolName, schemaJSON: compact.Bytes(), schema: s}, nil
}

// noLoader refuses every schema that is not in the document itself.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is outside the schema; a tool's schema may refer only to itself (#...)", url)
}

// sameInDraft6 reports whether a schema uses only keywords that validate
// the same way, with the same errors, in draft 6 as in the library's
// default draft (2020-12): no $schema, $ref, $id, format, content*,
// dependencies, if/then/else, tuple items, unevaluated* or anything newer.
func sameInDraft6(schema any) bool {
	switch s := schema.(type) {
	case bool:
		return true
	case map[string]any:
		for k, v := range s {
			switch k {
			case "type", "description", "title", "default", "examples", "enum", "const",
				"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
				"minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems",
				"minProperties", "maxProperties", "required":
				// values, no subschemas
			case "properties", "patternProperties":
				m, ok := v.(map[string]any)
				if !ok {
					return false
				}
				for _, sub := range m {
					if !sameInDraft6(sub) {
						return false
					}
				}
			case "additionalProperties", "items", "not", "propertyNames":
				if !sameInDraft6(v) {
					return false
				}
			case "anyOf", "oneOf", "allOf":
				a, ok := v.([]any)
				if !ok {
					return false
				}
				for _, sub := range a {
					if !sameInDraft6(sub) {
						return false
					}
				}
			default:
				return false
			}
		}
		return true
	}
	return false
}

// validate checks args against the schema. The arguments are parsed once,
// straight from args (parseTree); what parseTree leaves to the library
// (invalid JSON, duplicate keys) takes the library's decoder, so its
// errors are the library's. A valid parse is kept for the call's Paths and
// Execute (Parsed).
func (v *validator) validate(args json.RawMessage) error {
	inst, ok := parseTree(args)
	if !ok {
		var err error
		inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(args))
		if err != nil {
			return &ValidationError{Tool: v.tool, Problems: []FieldProblem{{Field: "root", Message: "arguments are not valid JSON: " + err.Error()}}}
		}
	}
	err := v.schema.Validate(inst)
	if err == nil {
		if ok {
			rememberParsed(args, inst)
		}
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return &ValidationError{Tool: v.tool, Problems: []FieldProblem{{Field: "root", Message: err.Error()}}, Received: args}
	}
	var problems []FieldProblem
	collectProblems(ve, &problems)
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].Field < problems[j].Field })
	return &ValidationError{Tool: v.tool, Problems: dedupe(problems), Received: args}
}

func collectProblems(e *jsonschema.ValidationError, out *[]FieldProblem) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collectProblems(c, out)
		}
		return
	}
	field := strings.Join(e.InstanceLocation, "/")
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, FieldProblem{Field: joinField(field, m), Message: fmt.Sprintf("must have required property '%s'", m)})
		}
		return
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, FieldProblem{Field: joinField(field, p), Message: "is not an allowed property"})
		}
		return
	}
	if field == "" {
		field = "root"
	}
	*out = append(*out, FieldProblem{Field: field, Message: problemMessage(e.ErrorKind)})
}

func joinField(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "/" + name
}

func problemMessage(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("must be %s (got %s)", strings.Join(k.Want, " or "), k.Got)
	case *kind.MinItems:
		return fmt.Sprintf("must NOT have fewer than %d items", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("must NOT have more than %d items", k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("must NOT have fewer than %d characters", k.Want)
	}
	var msg string
	func() {
		defer func() { recover() }()
		msg = k.LocalizedString(printer)
	}()
	if msg == "" {
		msg = "is invalid"
	}
	return msg
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
