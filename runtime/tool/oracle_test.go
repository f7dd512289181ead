package tool

// The validation pi had before internal/jsonschema, on the
// santhosh-tekuri/jsonschema library, kept as the oracle of the texts the
// model sees (TestValidationTextsUnchanged, FuzzValidationTextsUnchanged).

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

var oldPrinter = message.NewPrinter(language.English)

// ValidateWithLibrary is the error text (or "") the old validation gives
// for args, or the compile error.
func ValidateWithLibrary(schema, args json.RawMessage) (string, error) {
	v, err := oldCompileSchema("t", schema)
	if err != nil {
		return "", err
	}
	if err := v.validate(args); err != nil {
		return err.Error(), nil
	}
	return "", nil
}

// ValidateText is the error text (or "") pi gives for args, or the
// compile error.
func ValidateText(schema, args json.RawMessage) (string, error) {
	v, err := compileSchema("t", schema)
	if err != nil {
		return "", err
	}
	if _, err := v.validate(args); err != nil {
		return err.Error(), nil
	}
	return "", nil
}

type oldValidator struct {
	tool       string
	schemaJSON json.RawMessage
	schema     *jsonschema.Schema
}

// compileSchema compiles a tool's parameter schema. An empty schema means an
// object with any properties.
func oldCompileSchema(toolName string, raw json.RawMessage) (*oldValidator, error) {
	return oldCompileSchemaDraft(toolName, raw, true)
}

// compileSchemaDraft is compileSchema; allowDraft6 false always compiles
// with the library's default draft (tests compare the two).
func oldCompileSchemaDraft(toolName string, raw json.RawMessage, allowDraft6 bool) (*oldValidator, error) {
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
	c.UseLoader(oldNoLoader{})
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
	return &oldValidator{tool: toolName, schemaJSON: compact.Bytes(), schema: s}, nil
}

// oldNoLoader refuses every schema that is not in the document itself.
type oldNoLoader struct{}

func (oldNoLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is outside the schema; a tool's schema may refer only to itself (#...)", url)
}

// validate checks args against the schema. The arguments are parsed once,
// straight from args (parseTree); what parseTree leaves to the library
// (invalid JSON, duplicate keys) takes the library's decoder, so its
// errors are the library's.
func (v *oldValidator) validate(args json.RawMessage) error {
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
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return &ValidationError{Tool: v.tool, Problems: []FieldProblem{{Field: "root", Message: err.Error()}}, Received: args}
	}
	var problems []FieldProblem
	oldCollectProblems(ve, &problems)
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].Field < problems[j].Field })
	return &ValidationError{Tool: v.tool, Problems: dedupe(problems), Received: args}
}

func oldCollectProblems(e *jsonschema.ValidationError, out *[]FieldProblem) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			oldCollectProblems(c, out)
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
	*out = append(*out, FieldProblem{Field: field, Message: oldProblemMessage(e.ErrorKind)})
}

func oldProblemMessage(k jsonschema.ErrorKind) string {
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
		msg = k.LocalizedString(oldPrinter)
	}()
	if msg == "" {
		msg = "is invalid"
	}
	return msg
}
