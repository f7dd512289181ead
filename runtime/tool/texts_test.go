package tool_test

import (
	"encoding/json"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
	"github.com/pi-go/pi/tools/builtin"
)

// textSchemas are tool schemas as extensions and MCP servers write them,
// beyond draftSchemas: references, formats, drafts, combinators.
var textSchemas = []string{
	`{"type":"object","properties":{"q":{"type":"string","minLength":1,"maxLength":1000},"n":{"type":"integer","minimum":1000,"maximum":100000}},"required":["q"],"additionalProperties":false}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"d":{"type":"string","format":"date"},"e":{"type":"string","format":"email"},"u":{"format":"uri"}},"definitions":{"a":{"type":"string"}},"additionalProperties":{"$ref":"#/definitions/a"}}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","maximum":10,"exclusiveMaximum":true}}}`,
	`{"type":"object","$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v"]}},"properties":{"tree":{"$ref":"#/$defs/node"}}}`,
	`{"type":"object","properties":{"mode":{"enum":["a","b"]},"x":{"anyOf":[{"type":"string","pattern":"^[0-9]+$"},{"type":"integer","multipleOf":5}]},"y":{"oneOf":[{"const":1},{"type":"number"}]}},"if":{"properties":{"mode":{"const":"a"}}},"then":{"required":["x"]},"else":{"required":["y"]}}`,
	`{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false,"contains":{"type":"integer"},"minContains":1},"o":{"type":"object","dependentRequired":{"a":["b"]},"unevaluatedProperties":false,"properties":{"a":{},"b":{}}}}}`,
	`{"type":"object","properties":{"list":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false},"uniqueItems":true,"maxItems":3}}}`,
	`{"type":"object","properties":{"self":{"$ref":"#"},"v":{"type":["string","null"]}}}`,
	`{"type":"object","propertyNames":{"pattern":"^[a-z]+$"},"patternProperties":{"^x":{"type":"boolean"}}}`,
}

var textInstances = []string{
	`{"q":"","n":999}`, `{"q":"a","n":100001,"z":1}`, `{"d":"2020-02-30","e":"no","u":"rel","k":1}`, `{"n":10}`, `{"n":9.5}`,
	`{"tree":{"v":1,"kids":[{"v":"x"},{"kids":[]}]}}`, `{"mode":"a"}`, `{"mode":"b","y":1}`, `{"mode":"c","x":"12a"}`, `{"x":7}`,
	`{"t":["a","b"]}`, `{"t":["a",1,2]}`, `{"o":{"a":1,"c":2}}`, `{"list":[{"id":"a"},{"id":"a"},{},{"id":1,"x":2}]}`,
	`{"self":{"self":{"v":3}}}`, `{"Bad":1,"xa":"s"}`, `{"a":1,}`, `{"a":1} x`, `{"a":1,"a":2}`, ``, `nul`, `{"n":1e400}`, `{"n":12345678.5}`,
}

// TestValidationTextsUnchanged: for the built-in tools' schemas and for
// extension-style ones, every instance gets byte for byte the text (or
// success) that pi gave with the library it used before.
func TestValidationTextsUnchanged(t *testing.T) {
	var schemas []string
	for _, s := range draftSchemas {
		schemas = append(schemas, s.schema)
	}
	schemas = append(schemas, textSchemas...)
	for _, d := range builtin.Definitions(builtin.Options{}) {
		schemas = append(schemas, string(d.Parameters))
	}
	instances := append(append([]string{}, draftInstances...), textInstances...)
	for _, s := range schemas {
		for _, inst := range instances {
			want, werr := tool.ValidateWithLibrary(json.RawMessage(s), json.RawMessage(inst))
			got, gerr := tool.ValidateText(json.RawMessage(s), json.RawMessage(inst))
			if werr != nil || gerr != nil {
				t.Fatalf("schema %s: library %v, pi %v", s, werr, gerr)
			}
			if got != want {
				t.Errorf("schema %s, instance %s:\n pi:      %q\n library: %q", s, inst, got, want)
			}
		}
	}
}
