package jsonschema

import "testing"

var allDrafts = []Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020}

// keywordCases: per keyword, schemas and instances that exercise it; each
// runs in every draft against the library.
var keywordCases = []struct {
	name      string
	schemas   []string
	instances []string
}{
	{"type", []string{`{"type":"integer"}`, `{"type":"number"}`, `{"type":["string","null"]}`, `{"type":["object","array","boolean","integer"]}`, `{"type":"string"}`},
		[]string{`1`, `1.0`, `1.5`, `1e2`, `-0`, `"x"`, `null`, `true`, `[]`, `{}`, `1e-2`, `12345678901234567890`}},
	{"enum const", []string{`{"enum":[1,"a",null,{"x":1},[1,2]]}`, `{"enum":["a","b"]}`, `{"enum":[1.0]}`, `{"const":{"a":[1,2.0]}}`, `{"const":"x"}`, `{"const":null}`, `{"const":1}`},
		[]string{`1`, `1.0`, `"a"`, `"c"`, `null`, `{"x":1.0}`, `{"x":2}`, `[1,2]`, `[2,1]`, `{"a":[1,2]}`, `"x"`, `false`}},
	{"numbers", []string{`{"minimum":1,"maximum":10}`, `{"exclusiveMinimum":1,"exclusiveMaximum":10}`, `{"minimum":1,"exclusiveMinimum":true}`, `{"maximum":10,"exclusiveMaximum":true}`, `{"multipleOf":0.1}`, `{"multipleOf":3}`, `{"multipleOf":1e-5}`, `{"minimum":1000000,"maximum":-1.5e21}`},
		[]string{`0`, `1`, `1.0`, `10`, `10.5`, `0.3`, `9`, `0.00001`, `1e400`, `-1e400`, `1234567`, `"1"`, `3e2`, `2.5e-3`}},
	{"strings", []string{`{"minLength":2,"maxLength":3}`, `{"pattern":"^a+$"}`, `{"pattern":"é"}`, `{"maxLength":1000}`},
		[]string{`""`, `"a"`, `"aa"`, `"aaaa"`, `"éé"`, `"日本語"`, `"b"`, `1`, `"a'\"b"`}},
	{"arrays", []string{`{"minItems":1,"maxItems":2}`, `{"uniqueItems":true}`, `{"items":{"type":"integer"}}`, `{"items":[{"type":"string"}],"additionalItems":false}`, `{"items":[{"type":"string"}],"additionalItems":{"type":"integer"}}`, `{"prefixItems":[{"type":"string"}],"items":false}`, `{"contains":{"type":"string"}}`, `{"contains":{"type":"string"},"minContains":2,"maxContains":3}`, `{"contains":{"type":"string"},"minContains":0}`, `{"items":{"type":"integer"},"additionalItems":false}`},
		[]string{`[]`, `[1]`, `["a"]`, `["a",1]`, `["a","b","c","d"]`, `[1,1.0]`, `[{"a":1},{"a":1.0}]`, `[1,2,3]`, `["a",1,"b"]`, `{}`, `[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,5.0]`}},
	{"objects", []string{`{"properties":{"a":{"type":"string"}},"required":["a","b"]}`, `{"properties":{"a":true},"additionalProperties":false}`, `{"patternProperties":{"^x":{"type":"integer"}},"additionalProperties":{"type":"string"}}`, `{"minProperties":1,"maxProperties":2}`, `{"propertyNames":{"maxLength":2}}`, `{"propertyNames":{"pattern":"^[a-z]+$","minLength":2}}`, `{"dependencies":{"a":["b","c"],"b":{"required":["d"]}}}`, `{"dependentRequired":{"a":["b"]},"dependentSchemas":{"b":{"properties":{"a":{"type":"integer"}}}}}`},
		[]string{`{}`, `{"a":"x"}`, `{"a":1,"b":2}`, `{"a":"x","c":1}`, `{"x1":1,"y":"s"}`, `{"x1":"no","y":2}`, `{"abc":1,"Z":2}`, `{"a":1}`, `{"b":1}`, `{"a":1,"b":1,"c":1,"d":1}`, `[]`}},
	{"combinators", []string{`{"allOf":[{"type":"integer"},{"minimum":3}]}`, `{"anyOf":[{"type":"string"},{"type":"integer","minimum":5}]}`, `{"oneOf":[{"type":"integer"},{"minimum":2}]}`, `{"not":{"type":"string"}}`, `{"if":{"type":"integer"},"then":{"minimum":5},"else":{"type":"string"}}`, `{"if":true,"then":false}`, `{"if":false,"else":{"const":1}}`},
		[]string{`1`, `6`, `2.5`, `"s"`, `null`, `[]`, `7`}},
	{"refs", []string{`{"$defs":{"a":{"type":"string"}},"definitions":{"b":{"type":"integer"}},"properties":{"x":{"$ref":"#/$defs/a"},"y":{"$ref":"#/definitions/b"}}}`,
		`{"definitions":{"a~b":{"type":"string"},"c/d":{"type":"integer"},"e f":{"const":1}},"properties":{"x":{"$ref":"#/definitions/a~0b"},"y":{"$ref":"#/definitions/c~1d"},"z":{"$ref":"#/definitions/e%20f"}}}`,
		`{"type":"object","properties":{"next":{"$ref":"#"},"v":{"type":"integer"}}}`,
		`{"$ref":"#/definitions/a","definitions":{"a":{"type":"integer"}},"minimum":5}`,
		`{"$ref":"#/definitions/a","definitions":{"a":{"type":"integer"}},"const":3}`,
		`{"$id":"http://example.com/root.json","definitions":{"a":{"$id":"item.json","type":"string"},"b":{"$id":"#bee","type":"integer"}},"properties":{"x":{"$ref":"item.json"},"y":{"$ref":"#bee"}}}`,
		`{"$defs":{"a":{"$anchor":"anc","type":"boolean"}},"properties":{"x":{"$ref":"#anc"}}}`,
		`{"$ref":"#"}`,
		`{"properties":{"a":{"$ref":"#/properties/b"},"b":{"$ref":"#/properties/a"}}}`,
		`{"anyOf":[{"$ref":"#"},{"type":"string"}]}`,
		`{"x-unknown":{"type":"string"},"properties":{"a":{"$ref":"#/x-unknown"}}}`,
		`{"items":[{"type":"integer"}],"properties":{"a":{"$ref":"#/items/0"}}}`,
	}, []string{`{}`, `{"x":"s","y":1}`, `{"x":1,"y":"s"}`, `{"x":"s","y":1,"z":2}`, `{"next":{"next":{"v":"no"}},"v":1}`, `3`, `5`, `6`, `"s"`, `{"a":1}`, `{"a":"s"}`, `[]`}},
	{"unevaluated", []string{`{"properties":{"a":true},"unevaluatedProperties":false}`, `{"allOf":[{"properties":{"a":true}}],"unevaluatedProperties":{"type":"integer"}}`, `{"anyOf":[{"properties":{"a":true}},{"properties":{"b":true}}],"unevaluatedProperties":false}`, `{"prefixItems":[true],"unevaluatedItems":false}`, `{"items":[true],"unevaluatedItems":false}`, `{"contains":{"type":"string"},"unevaluatedItems":{"type":"integer"}}`, `{"if":{"properties":{"a":{"const":1}}},"then":{"properties":{"b":true}},"unevaluatedProperties":false}`, `{"$ref":"#/$defs/a","$defs":{"a":{"properties":{"a":true}}},"unevaluatedProperties":false}`},
		[]string{`{}`, `{"a":1}`, `{"a":1,"b":2}`, `{"a":1,"b":"x","c":3}`, `[]`, `[1]`, `[1,2]`, `["a",1,"b",true]`, `{"a":2,"b":1}`}},
	{"format", []string{`{"format":"date"}`, `{"format":"email"}`, `{"format":"ipv4"}`, `{"format":"ipv6"}`, `{"format":"uri"}`, `{"format":"date-time"}`, `{"format":"uuid"}`, `{"format":"regex"}`, `{"format":"hostname"}`, `{"format":"duration"}`, `{"format":"time"}`, `{"format":"json-pointer"}`, `{"format":"relative-json-pointer"}`, `{"format":"uri-reference"}`, `{"format":"uri-template"}`, `{"format":"semver"}`, `{"format":"period"}`, `{"format":"no-such"}`},
		[]string{`"2020-13-45"`, `"2020-01-02"`, `"a@b.c"`, `"a@"`, `"..@x"`, `"1.2.3.4"`, `"01.2.3.4"`, `"1.2.3"`, `"::1"`, `"::1%eth0"`, `"x"`, `"http://x/y"`, `"/rel"`, `"2020-01-02T03:04:05Z"`, `"2020-01-02T25:04:05Z"`, `"123e4567-e89b-12d3-a456-426614174000"`, `"123e4567"`, `"("`, `"a-b.c"`, `"-a"`, `"P1Y2M"`, `"PT"`, `"P1M1Y"`, `"12:00:00+01:00"`, `"/a~2"`, `"0/a"`, `"01"`, `"http://x/{a}"`, `"http://x/{a"`, `"1.2.3-alpha"`, `"01.2.3"`, `"2020-01-02T03:04:05Z/P1D"`, `1`, `"a\\b"`}},
	{"booleans", []string{`true`, `false`, `{"properties":{"a":false,"b":true}}`, `{"not":true}`, `{"items":false}`, `{}`},
		[]string{`1`, `{"a":1}`, `{"b":1}`, `[]`, `[1]`}},
}

// TestKeywordsAgreeWithLibrary: every keyword, in every draft, gives the
// library's verdict and the library's problems (location and text).
func TestKeywordsAgreeWithLibrary(t *testing.T) {
	for _, c := range keywordCases {
		t.Run(c.name, func(t *testing.T) {
			for _, d := range allDrafts {
				for _, s := range c.schemas {
					compare(t, s, d, c.instances...)
				}
			}
		})
	}
}
