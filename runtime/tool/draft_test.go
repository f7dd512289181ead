package tool_test

import (
	"encoding/json"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
	"github.com/pi-go/pi/tools/builtin"
)

// draftSchemas are schemas pi validates as draft 6 (every built-in tool's,
// and extension-style ones using the same keywords) and ones it must not.
var draftSchemas = []struct {
	schema string
	draft6 bool
}{
	{`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":9,"multipleOf":2},"s":{"type":"string","minLength":2,"maxLength":4,"pattern":"^a"},"e":{"enum":["x","y"]},"c":{"const":3},"a":{"type":"array","items":{"type":"number"},"minItems":1,"maxItems":2,"uniqueItems":true},"o":{"type":"object","minProperties":1,"maxProperties":1,"propertyNames":{"maxLength":2},"patternProperties":{"^z":{"type":"boolean"}},"additionalProperties":false},"u":{"anyOf":[{"type":"string"},{"type":"null"}]},"v":{"oneOf":[{"type":"integer"},{"minimum":5}]},"w":{"allOf":[{"type":"number"},{"not":{"const":0}}]},"x":{"exclusiveMinimum":0,"exclusiveMaximum":10}},"required":["n"],"additionalProperties":{"type":"string"}}`, true},
	{`{"type":"object","properties":{"d":{"type":"string","format":"date"}}}`, false},
	{`{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"string"}]}}}`, false},
	{`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"r":{"$ref":"#/$defs/s"}}}`, false},
	{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, false},
	{`{"type":"object","properties":{"b":{"type":"string","contentEncoding":"base64"}}}`, false},
	{`{"type":"object","if":{"required":["a"]},"then":{"required":["b"]}}`, false},
}

var draftInstances = []string{
	`{}`, `{"n":1}`, `{"n":2}`, `{"n":2.0}`, `{"n":12}`, `{"n":"2"}`, `{"n":null}`, `{"s":"ab"}`, `{"s":"a"}`, `{"s":"abcde"}`, `{"s":"ba"}`,
	`{"e":"z"}`, `{"c":4}`, `{"a":[]}`, `{"a":[1,1]}`, `{"a":[1,"x"]}`, `{"o":{}}`, `{"o":{"zz":true}}`, `{"o":{"zzz":1}}`, `{"o":{"q":1}}`,
	`{"u":1}`, `{"v":7}`, `{"v":1.5}`, `{"w":0}`, `{"x":0}`, `{"x":10}`, `{"extra":1}`, `{"extra":"s"}`, `{"d":"2020-13-45"}`,
	`{"t":[1]}`, `{"r":1}`, `{"b":"!!"}`, `{"a":1}`, `{"a":1,"b":2}`, `[]`, `"x"`, `null`, `{"n":1,"n2":{"deep":[1,{"x":[]}]}}`,
	`{"path":1}`, `{"path":"a"}`, `{"path":"a","content":"c"}`, `{"path":"a","edits":[{"oldText":"a"}]}`, `{"path":"a","edits":[]}`,
	`{"path":"a","edits":[{"oldText":"a","newText":"b","x":1}]}`, `{"path":"a","edits":"x"}`, `{"command":"ls","timeout":"1"}`,
	`{"pattern":1,"limit":-1,"context":"2","ignoreCase":1}`, `{"path":"a","offset":"1","limit":[]}`, `{"bogus":true}`,
}

// TestDraft6SameErrors: for every schema pi validates as draft 6, every
// instance gets exactly the error text (or success) the library's default
// draft gives; the schemas whose meaning differs stay on the default.
func TestDraft6SameErrors(t *testing.T) {
	schemas := draftSchemas
	for _, d := range builtin.Definitions(builtin.Options{}) {
		schemas = append(schemas, struct {
			schema string
			draft6 bool
		}{string(d.Parameters), true})
	}
	for _, s := range schemas {
		for _, inst := range draftInstances {
			got, want, draft6, err := tool.ValidateBothDrafts(json.RawMessage(s.schema), json.RawMessage(inst))
			if err != nil {
				t.Fatalf("%s: %v", s.schema, err)
			}
			if draft6 != s.draft6 {
				t.Fatalf("%s: validated as draft 6 = %v, want %v", s.schema, draft6, s.draft6)
			}
			if got != want {
				t.Errorf("schema %s, instance %s:\n pi:      %q\n default: %q", s.schema, inst, got, want)
			}
		}
	}
}
