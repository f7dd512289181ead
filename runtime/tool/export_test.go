package tool

import (
	"encoding/json"

	"github.com/pi-go/pi/internal/jsonschema"
)

// ValidateBothDrafts validates args against schema compiled as draft 6
// when its keywords mean the same there (sameInDraft6), and compiled as
// pi compiles it (2020-12), and returns both errors' texts ("" when valid)
// and whether draft 6 was used. pi once validated such schemas as draft 6
// (the old library copied every string for draft 7+'s contentEncoding);
// the comparison now checks that the validator's drafts agree.
func ValidateBothDrafts(schema, args json.RawMessage) (draft6Text, defaultText string, draft6 bool, err error) {
	doc, _ := parseTree(schema)
	draft6 = sameInDraft6(doc)
	d := jsonschema.Draft2020
	if draft6 {
		d = jsonschema.Draft6
	}
	a, err := compileSchemaDraft("t", schema, d)
	if err != nil {
		return "", "", false, err
	}
	b, err := compileSchema("t", schema)
	if err != nil {
		return "", "", false, err
	}
	text := func(e error) string {
		if e == nil {
			return ""
		}
		return e.Error()
	}
	_, errA := a.validate(args)
	_, errB := b.validate(args)
	return text(errA), text(errB), draft6, nil
}

// sameInDraft6 reports whether a schema uses only keywords that validate
// the same way, with the same errors, in draft 6 as in 2020-12: no
// $schema, $ref, $id, format, content*, dependencies, if/then/else, tuple
// items, unevaluated* or anything newer.
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
