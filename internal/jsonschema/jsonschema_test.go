package jsonschema

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMalformedKeywordsAreCompileErrors: a keyword value the draft does
// not allow is a compile error naming the keyword's location, never a
// panic and never a keyword silently ignored; the library refuses each
// one too.
func TestMalformedKeywordsAreCompileErrors(t *testing.T) {
	cases := []struct {
		draft  Draft
		schema string
		at     string
	}{
		{Draft2020, `{"properties":{"a":{"minLength":"x"}}}`, "#/properties/a/minLength"},
		{Draft2020, `{"required":3}`, "#/required"},
		{Draft2020, `{"required":["a","a"]}`, "#/required"},
		{Draft4, `{"required":[]}`, "#/required"},
		{Draft2020, `{"maxItems":-1}`, "#/maxItems"},
		{Draft2020, `{"minProperties":1.5}`, "#/minProperties"},
		{Draft2020, `{"type":"nope"}`, "#/type"},
		{Draft2020, `{"type":["string","string"]}`, "#/type"},
		{Draft2020, `{"type":[]}`, "#/type"},
		{Draft2020, `{"pattern":"("}`, "#/pattern"},
		{Draft2020, `{"patternProperties":{"(":{}}}`, "#/patternProperties"},
		{Draft7, `{"enum":[]}`, "#/enum"},
		{Draft7, `{"enum":[1,1.0]}`, "#/enum"},
		{Draft2020, `{"items":[{}]}`, "#/items"},
		{Draft7, `{"items":3}`, "#/items"},
		{Draft2020, `{"properties":[]}`, "#/properties"},
		{Draft2020, `{"properties":{"a":3}}`, "#/properties/a"},
		{Draft4, `{"properties":{"a":true}}`, "#/properties/a"},
		{Draft2020, `{"allOf":[]}`, "#/allOf"},
		{Draft2020, `{"anyOf":[{},1]}`, "#/anyOf/1"},
		{Draft2020, `{"$ref":3}`, "#/$ref"},
		{Draft2020, `{"multipleOf":0}`, "#/multipleOf"},
		{Draft2020, `{"exclusiveMinimum":true}`, "#/exclusiveMinimum"},
		{Draft4, `{"exclusiveMinimum":true}`, "#/exclusiveMinimum"},
		{Draft4, `{"exclusiveMaximum":3}`, "#/exclusiveMaximum"},
		{Draft2020, `{"dependencies":{"a":3}}`, "#/dependencies/a"},
		{Draft2020, `{"dependentRequired":{"a":"b"}}`, "#/dependentRequired"},
		{Draft2020, `{"not":"x"}`, "#/not"},
		{Draft2020, `{"$defs":{"a":{"minimum":"1"}}}`, "#/$defs/a/minimum"},
		{Draft2020, `{"$anchor":"1bad"}`, "#/$anchor"},
		{Draft2020, `{"$id":"http://x/y#frag"}`, "#/$id"},
		{Draft2020, `{"$schema":3}`, "#/$schema"},
		{Draft2020, `{"uniqueItems":"yes"}`, "#/uniqueItems"},
		{Draft2020, `{"minContains":-2,"contains":{}}`, "#/minContains"},
		{Draft2020, `{"properties":{"a":{"$ref":"#/$defs/b"}},"$defs":{"b":{"maxLength":"2"}}}`, "#/$defs/b/maxLength"},
		{Draft2020, `{"$ref":"#/x-ext","x-ext":{"minItems":"1"}}`, "#/x-ext/minItems"},
	}
	for _, c := range cases {
		if _, err := oracleCompile(c.schema, c.draft); err == nil {
			t.Errorf("draft %d %s: the library compiles it; the case is wrong", c.draft, c.schema)
		}
		_, err := Compile(mustTree(t, c.schema), Options{URL: "pi:t.json", DefaultDraft: c.draft})
		var ce *CompileError
		if err == nil {
			t.Errorf("draft %d %s: compiled", c.draft, c.schema)
			continue
		}
		if strings.Contains(c.schema, `"(`) {
			// Regexes name the keyword with Go's parse error.
			if !strings.Contains(err.Error(), "pi:t.json"+c.at) || !strings.Contains(err.Error(), "missing closing )") {
				t.Errorf("draft %d %s: %v", c.draft, c.schema, err)
			}
			continue
		}
		if !errors.As(err, &ce) || ce.Location != "pi:t.json"+c.at {
			t.Errorf("draft %d %s: %v, want a CompileError at %s", c.draft, c.schema, err, c.at)
		}
	}
}

// TestReferencesStayInTheDocument: a reference (or $schema) to anything
// but the document is refused with the text pi has always given, and
// nothing is loaded; references inside resolve: pointers with ~0 ~1 and
// %-escapes, anchors, $id-relative URLs.
func TestReferencesStayInTheDocument(t *testing.T) {
	for _, c := range []struct{ schema, url string }{
		{`{"$ref":"file:///etc/passwd"}`, "file:///etc/passwd"},
		{`{"properties":{"a":{"$ref":"http://127.0.0.1:1/s.json#/x"}}}`, "http://127.0.0.1:1/s.json"},
		{`{"$ref":"http://json-schema.org/draft-07/schema#"}`, "http://json-schema.org/draft-07/schema"},
		{`{"$schema":"file:///tmp/meta.json"}`, "file:///tmp/meta.json"},
		{`{"$id":"http://example.com/a/root.json","$ref":"other.json"}`, "http://example.com/a/other.json"},
		{`{"$defs":{"x":{"$id":"http://e.com/x.json"}},"$ref":"http://e.com/y.json"}`, "http://e.com/y.json"},
	} {
		_, err := Compile(mustTree(t, c.schema), Options{URL: "pi:tool/t.json"})
		want := `failing loading "` + c.url + `": ` + c.url + ` is outside the schema; a tool's schema may refer only to itself (#...)`
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", c.schema, err, want)
		}
	}
	_, err := Compile(mustTree(t, `{"$ref":"/etc/x.json"}`), Options{URL: "pi:extension/config.json", Owner: "an extension's configSchema"})
	if err != nil {
		// An opaque base keeps a relative reference in the document.
		t.Errorf("relative reference: %v", err)
	}
	s, err := Compile(mustTree(t, `{"$id":"http://example.com/root.json","$defs":{"a b":{"$id":"item.json","type":"string"},"c~/d":{"$anchor":"anc","type":"integer"}},
		"properties":{"x":{"$ref":"item.json"},"y":{"$ref":"#anc"},"z":{"$ref":"#/$defs/c~0~1d"},"w":{"$ref":"#/$defs/a%20b"}}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(mustTree(t, `{"x":"s","y":1,"z":2,"w":"t"}`)); err != nil {
		t.Errorf("valid: %v", err)
	}
	err = s.Validate(mustTree(t, `{"x":1,"y":"s","z":"s","w":2}`))
	if err == nil || len(err.(*Error).Leaves()) != 4 {
		t.Errorf("want 4 problems, got %v", err)
	}
}

// TestDynamicReferencesRefused: $dynamicRef (2020-12) and $recursiveRef
// (2019-09) are refused at compile with an error naming them.
func TestDynamicReferencesRefused(t *testing.T) {
	for _, c := range []struct {
		d      Draft
		schema string
	}{
		{Draft2020, `{"$dynamicAnchor":"m","properties":{"a":{"$dynamicRef":"#m"}}}`},
		{Draft2019, `{"$recursiveAnchor":true,"items":{"$recursiveRef":"#"}}`},
	} {
		_, err := Compile(mustTree(t, c.schema), Options{DefaultDraft: c.d})
		if err == nil || !strings.Contains(err.Error(), "is not supported; use $ref") {
			t.Errorf("%s: %v", c.schema, err)
		}
	}
}

// TestRefCyclesEnd: references that lead back to themselves, at compile
// and at validation, end (a cycle on the same value is the library's
// RefCycle problem), however deep the instance.
func TestRefCyclesEnd(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 2000) + `1` + strings.Repeat(`}`, 2000)
	for _, schema := range []string{
		`{"$ref":"#"}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`,
		`{"anyOf":[{"$ref":"#"},{"type":"string"}]}`,
		`{"properties":{"a":{"$ref":"#"}},"additionalProperties":false}`,
		`{"allOf":[{"$ref":"#/allOf/0"}]}`,
	} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			s, err := Compile(mustTree(t, schema), Options{})
			if err != nil {
				t.Errorf("%s: %v", schema, err)
				return
			}
			for _, inst := range []string{`1`, `"s"`, deep} {
				s.Validate(mustTree(t, inst))
			}
			compare(t, schema, Draft2020, `1`, `"s"`, `{"a":{"a":{"b":1}}}`)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: validation does not end", schema)
		}
	}
}

// TestHugeNumbersAreCheap: a number literal with a huge exponent (which
// the library turned into a big.Rat of that size) is compared, tested for
// integer and for multipleOf without building it.
func TestHugeNumbersAreCheap(t *testing.T) {
	s, err := Compile(mustTree(t, `{"properties":{"i":{"type":"integer"},"m":{"minimum":5,"maximum":1e400},"k":{"multipleOf":7},"f":{"multipleOf":0.5}}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		inst  string
		valid bool
	}{
		{`{"i":1e999999999}`, true}, {`{"i":1.5e-999999999}`, false}, {`{"i":123.000e2}`, true},
		{`{"m":1e999999999}`, false}, {`{"m":-1e999999999}`, false}, {`{"m":1e399}`, true}, {`{"m":5e-999999999}`, false},
		{`{"k":7e999999999}`, true}, {`{"k":1e999999999}`, false}, {`{"k":0}`, true},
		{`{"f":1.5e999999999}`, true}, {`{"f":0.25}`, false},
		{`{"i":1e99999999999999999999999}`, true},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		err := s.Validate(mustTree(t, c.inst))
		runtime.ReadMemStats(&after)
		if (err == nil) != c.valid {
			t.Errorf("%s: valid=%v, want %v (%v)", c.inst, err == nil, c.valid, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", c.inst, d)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("%s: allocated %d bytes", c.inst, n)
		}
	}
}

// TestStringsAreNotCopied: validating a 20 MB string allocates nothing
// near its size (the library copied every string for contentEncoding in
// draft 7 and later), in every draft, with content keywords present, also
// when a length bound fails. (A failing pattern or format quotes the
// string in its message, as it always did.)
func TestStringsAreNotCopied(t *testing.T) {
	big := strings.Repeat("x", 20<<20)
	inst := map[string]any{"content": big}
	for _, d := range allDrafts {
		s, err := Compile(mustTree(t, `{"type":"object","properties":{"content":{"type":"string","contentEncoding":"base64","contentMediaType":"application/json","contentSchema":{"type":"object"},"maxLength":100,"pattern":"^x"}}}`), Options{DefaultDraft: d})
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s.Validate(inst)
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("draft %d: validating a 20 MB string allocated %d bytes", d, n)
		}
	}
}

// TestCostlySchemasStop: a small schema whose anyOfs refer, through $ref,
// to further anyOfs costs 2^depth steps on a value that matches nowhere;
// validation stops at its budget with one Budget failure (without the
// bound this test would run for years), wherever the costly schema is
// applied, and big honest instances stay under MaxSteps. The costly cases
// run with a budget of 20k steps (the same code path, a test's time).
func TestCostlySchemasStop(t *testing.T) {
	const depth = 40
	stepBudget = 20_000
	t.Cleanup(func() { stepBudget = MaxSteps })
	var defs []string
	for i := range depth {
		defs = append(defs, fmt.Sprintf(`"a%d":{"anyOf":[{"$ref":"#/$defs/a%d"},{"$ref":"#/$defs/a%d"},{"const":%d}]}`, i, i+1, i+1, 1000+i))
	}
	defs = append(defs, fmt.Sprintf(`"a%d":{"type":"null"}`, depth))
	costly := `"$defs":{` + strings.Join(defs, ",") + `}`
	for _, c := range []struct{ schema, inst string }{
		{`{` + costly + `,"$ref":"#/$defs/a0"}`, `1`},
		{`{` + costly + `,"propertyNames":{"$ref":"#/$defs/a0"}}`, `{"k":1}`},
		{`{` + costly + `,"items":{"$ref":"#/$defs/a0"}}`, `[1]`},
	} {
		s, err := Compile(mustTree(t, c.schema), Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = s.Validate(mustTree(t, c.inst))
		var ve *Error
		if !errors.As(err, &ve) {
			t.Fatalf("%s on %s: want a validation error, got %v", c.schema[len(costly)+2:], c.inst, err)
		}
		leaves := ve.Leaves()
		if len(leaves) != 1 {
			t.Fatalf("%s on %s: leaves %v, want the budget alone", c.schema[len(costly)+2:], c.inst, leaves)
		}
		b, ok := leaves[0].Kind.(*Budget)
		if !ok || b.Steps != 20_000 || !strings.Contains(b.Message(), "20,000 steps") {
			t.Fatalf("%s on %s: leaf %#v (%q), want Budget{20000}", c.schema[len(costly)+2:], c.inst, leaves[0].Kind, leaves[0].Kind.Message())
		}
	}
	// An honest instance of 100k values stays under MaxSteps.
	stepBudget = MaxSteps
	items := strings.TrimSuffix(strings.Repeat("1,", 100_000), ",")
	big, err := Compile(mustTree(t, `{"type":"array","items":{"type":"integer","minimum":0}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Validate(mustTree(t, "["+items+"]")); err != nil {
		t.Fatalf("100k integers: %v", err)
	}
}
