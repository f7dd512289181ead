package jsonschema

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// gen builds schemas and instances from fuzz bytes: each decision takes
// one byte, so the fuzzer's mutations change the structure.
type gen struct {
	b []byte
	i int
}

func (g *gen) n(k int) int {
	if g.i >= len(g.b) {
		return 0
	}
	x := int(g.b[g.i])
	g.i++
	return x % k
}

func (g *gen) pick(xs ...any) any { return xs[g.n(len(xs))] }

var (
	genNames    = []any{"a", "b", "c", "ab"}
	genTypes    = []any{"null", "boolean", "integer", "number", "string", "array", "object"}
	genNumbers  = []any{json.Number("0"), json.Number("1"), json.Number("2"), json.Number("1.0"), json.Number("2.5"), json.Number("-1"), json.Number("10"), json.Number("0.5"), json.Number("1e1")}
	genStrings  = []any{"", "a", "ab", "abc", "é", "2020-01-02", "x@y.z", "1.2.3.4"}
	genPatterns = []any{"^a", "b$", "^[a-c]*$", "é", "(", "a{2}", "\\d"}
	genFormats  = []any{"date", "email", "ipv4", "uri", "regex", "uuid", "hostname", "nope"}
	genRefs     = []any{"#", "#/$defs/d", "#/definitions/d", "#/$defs/e", "#anc", "#/properties/a"}
)

func (g *gen) count() any {
	return g.pick(json.Number("0"), json.Number("1"), json.Number("2"), json.Number("3"), json.Number("1.0"), "x", json.Number("-1"))
}

func (g *gen) value(depth int) any {
	switch k := g.n(8); {
	case k == 0:
		return nil
	case k == 1:
		return g.n(2) == 1
	case k == 2 || k == 3:
		return genNumbers[g.n(len(genNumbers))]
	case k == 4 || k == 5 || depth > 2:
		return genStrings[g.n(len(genStrings))]
	case k == 6:
		a := []any{}
		for i := g.n(4); i > 0; i-- {
			a = append(a, g.value(depth+1))
		}
		return a
	}
	m := map[string]any{}
	for i := g.n(4); i > 0; i-- {
		m[genNames[g.n(len(genNames))].(string)] = g.value(depth + 1)
	}
	return m
}

func (g *gen) schemaArray(depth int) []any {
	a := []any{g.schema(depth + 1)}
	if g.n(2) == 1 {
		a = append(a, g.schema(depth+1))
	}
	return a
}

func (g *gen) schema(depth int) any {
	if depth > 3 || g.n(6) == 0 {
		if g.n(4) == 0 {
			return g.n(2) == 1
		}
		return map[string]any{"type": genTypes[g.n(len(genTypes))]}
	}
	m := map[string]any{}
	for i := g.n(4) + 1; i > 0; i-- {
		switch g.n(40) {
		case 0:
			m["type"] = genTypes[g.n(len(genTypes))]
		case 1:
			m["type"] = []any{genTypes[g.n(len(genTypes))], genTypes[g.n(len(genTypes))]}
		case 2:
			m["enum"] = []any{g.value(2), g.value(2)}
		case 3:
			m["const"] = g.value(1)
		case 4:
			m[g.pick("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum").(string)] = genNumbers[g.n(len(genNumbers))]
		case 5:
			m["multipleOf"] = g.pick(json.Number("0.5"), json.Number("2"), json.Number("0"), json.Number("3"))
		case 6:
			m[g.pick("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties").(string)] = g.count()
		case 7:
			m["pattern"] = genPatterns[g.n(len(genPatterns))]
		case 8:
			m["items"] = g.schema(depth + 1)
		case 9:
			m["items"] = g.schemaArray(depth)
		case 10:
			m["prefixItems"] = g.schemaArray(depth)
		case 11:
			m["additionalItems"] = g.schema(depth + 1)
		case 12:
			m["contains"] = g.schema(depth + 1)
		case 13:
			m[g.pick("minContains", "maxContains").(string)] = g.count()
		case 14:
			m["uniqueItems"] = g.n(2) == 1
		case 15, 16:
			props := map[string]any{}
			for j := g.n(3) + 1; j > 0; j-- {
				props[genNames[g.n(len(genNames))].(string)] = g.schema(depth + 1)
			}
			m["properties"] = props
		case 17:
			m["patternProperties"] = map[string]any{genPatterns[g.n(len(genPatterns))].(string): g.schema(depth + 1)}
		case 18:
			m["additionalProperties"] = g.schema(depth + 1)
		case 19:
			req := []any{}
			for j := g.n(3); j >= 0; j-- {
				req = append(req, genNames[g.n(len(genNames))])
			}
			m["required"] = req
		case 20:
			m["propertyNames"] = g.schema(depth + 1)
		case 21:
			if g.n(2) == 0 {
				m["dependencies"] = map[string]any{"a": []any{"b"}}
			} else {
				m["dependencies"] = map[string]any{"b": g.schema(depth + 1)}
			}
		case 22:
			m["dependentRequired"] = map[string]any{genNames[g.n(len(genNames))].(string): []any{genNames[g.n(len(genNames))]}}
		case 23:
			m["dependentSchemas"] = map[string]any{genNames[g.n(len(genNames))].(string): g.schema(depth + 1)}
		case 24:
			m["allOf"] = g.schemaArray(depth)
		case 25:
			m["anyOf"] = g.schemaArray(depth)
		case 26:
			m["oneOf"] = g.schemaArray(depth)
		case 27:
			m["not"] = g.schema(depth + 1)
		case 28:
			m["if"] = g.schema(depth + 1)
			m["then"] = g.schema(depth + 1)
		case 29:
			m["else"] = g.schema(depth + 1)
		case 30, 31:
			m["$ref"] = genRefs[g.n(len(genRefs))]
		case 32:
			m["unevaluatedProperties"] = g.schema(depth + 1)
		case 33:
			m["unevaluatedItems"] = g.schema(depth + 1)
		case 34:
			m["format"] = genFormats[g.n(len(genFormats))]
		case 35:
			m["$anchor"] = "anc"
		case 36:
			m["required"] = g.pick(json.Number("3"), "a", []any{})
		case 37:
			m["additionalProperties"] = g.n(2) == 1
		case 38:
			m["items"] = g.n(2) == 1
		case 39:
			m[g.pick("title", "description", "$comment", "default", "examples").(string)] = g.value(2)
		}
	}
	return m
}

// FuzzSchemaAgreesWithSanthosh: random schemas built from the supported
// keywords, in a random draft, compile in both libraries or in neither;
// random instances get the same verdict and the same problems (instance
// location and text) from both.
func FuzzSchemaAgreesWithSanthosh(f *testing.F) {
	for _, seed := range [][]byte{
		{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		{5, 15, 0, 1, 2, 30, 0, 7, 3},
		{3, 30, 1, 24, 0, 25, 2, 9, 9, 9, 9},
		{0, 31, 2, 32, 4, 15, 1, 0, 33, 9, 9, 1, 2, 3},
		{4, 34, 0, 28, 9, 9, 13, 1, 12, 2, 3, 4},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{b: data}
		d := allDrafts[g.n(len(allDrafts))]
		root := g.schema(0)
		if m, ok := root.(map[string]any); ok && g.n(2) == 1 {
			m["$defs"] = map[string]any{"d": g.schema(2), "e": map[string]any{"$anchor": "anc", "type": "string"}}
			m["definitions"] = map[string]any{"d": g.schema(2)}
		}
		schema, err := json.Marshal(root)
		if err != nil {
			t.Fatal(err)
		}
		var instances []string
		for i := 0; i < 4; i++ {
			b, _ := json.Marshal(g.value(0))
			instances = append(instances, string(b))
		}
		compare(t, string(schema), d, instances...)
	})
}

// FuzzCompileNeverPanics: any JSON document, in any draft, compiles or is
// refused with an error, and a compiled one validates any instance
// without panicking.
func FuzzCompileNeverPanics(f *testing.F) {
	for _, s := range []string{`{"minLength":"x"}`, `{"$ref":"#/a~2"}`, `{"items":[{"$ref":"#/items/0"}]}`, `{"$id":"#x","$ref":"#x"}`, `{"properties":{"a":{"$ref":"#/properties"}}}`, `{"type":["integer",3]}`, `{"$schema":"#"}`} {
		f.Add([]byte(s), []byte(`{"a":[1,"x",null]}`))
	}
	// A small budget: what is fuzzed is that nothing panics or hangs, and a
	// costly schema at the full MaxSteps takes about a second per draft,
	// which would stall the fuzzer.
	stepBudget = 20_000
	f.Cleanup(func() { stepBudget = MaxSteps })
	f.Fuzz(func(t *testing.T, schema, instance []byte) {
		tm := time.AfterFunc(3*time.Second, func() { panic(fmt.Sprintf("HANG schema %q instance %q", schema, instance)) })
		defer tm.Stop()
		doc, err := Unmarshal(schema)
		if err != nil {
			return
		}
		inst, err := Unmarshal(instance)
		if err != nil {
			inst = map[string]any{}
		}
		for _, d := range allDrafts {
			s, err := Compile(doc, Options{DefaultDraft: d})
			if err != nil {
				continue
			}
			if err := s.Validate(inst); err != nil {
				_ = err.Error()
			}
		}
	})
}
