package jsonschema

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// checkTree checks the schema at ptr and every subschema the meta-schema
// reaches from it, each in the draft of its resource.
func (c *compiler) checkTree(v any, ptr string) error {
	type item struct {
		v   any
		ptr string
	}
	stack := []item{{v, ptr}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c.checked[it.ptr] {
			continue
		}
		d := c.resourceAt(it.ptr).draft
		if err := c.checkSchema(it.v, it.ptr, d); err != nil {
			return err
		}
		if obj, ok := it.v.(map[string]any); ok {
			// Only objects go on: the keyword checks judged every
			// other child (a boolean where the draft allows one, an
			// items array, a dependencies list).
			kids := children(obj, it.ptr, d, true)
			for i := len(kids) - 1; i >= 0; i-- {
				if x, ok := kids[i][1].(map[string]any); ok {
					stack = append(stack, item{x, kids[i][0].(string)})
				}
			}
		}
	}
	return nil
}

// checkSchema checks the keyword values of the schema at ptr as the
// draft's meta-schema would: a value of the wrong type or range is an
// error naming the keyword, never a panic or a silently ignored keyword.
// Subschemas are checked when the walk reaches them.
func (c *compiler) checkSchema(v any, ptr string, d Draft) error {
	if c.checked[ptr] {
		return nil
	}
	c.checked[ptr] = true
	obj, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); isBool && d >= Draft6 {
			return nil
		}
		if d == Draft4 {
			return c.errAt(ptr, "a draft-04 schema must be an object, got %s", jsonTypeName(v))
		}
		return c.errAt(ptr, "a schema must be an object or a boolean, got %s", jsonTypeName(v))
	}
	for _, kw := range sortedKeys(obj) {
		if err := c.checkKeyword(obj, kw, obj[kw], appendPtr(ptr, kw), d); err != nil {
			return err
		}
	}
	return nil
}

var simpleTypes = map[string]bool{"array": true, "boolean": true, "integer": true, "null": true, "number": true, "object": true, "string": true}

var (
	anchor2019 = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][-A-Za-z0-9.:_]*$`) })
	anchor2020 = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][-A-Za-z0-9._]*$`) })
)

func (c *compiler) checkKeyword(obj map[string]any, kw string, v any, at string, d Draft) error {
	bad := func(want string) error {
		return c.errAt(at, "%s must be %s, got %s", kw, want, describe(v))
	}
	isSchema := func(x any) bool {
		switch x.(type) {
		case map[string]any:
			return true
		case bool:
			return d >= Draft6
		}
		return false
	}
	schemaWord := "a schema (an object or a boolean)"
	if d == Draft4 {
		schemaWord = "a schema (an object)"
	}
	schema := func() error {
		if !isSchema(v) {
			return bad(schemaWord)
		}
		return nil
	}
	schemaMap := func() error {
		m, ok := v.(map[string]any)
		if !ok {
			return bad("an object of schemas")
		}
		for _, k := range sortedKeys(m) {
			if !isSchema(m[k]) {
				return c.errAt(appendPtr(at, k), "%s/%s must be %s, got %s", kw, k, schemaWord, describe(m[k]))
			}
		}
		return nil
	}
	schemaArray := func() error {
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			return bad("a non-empty array of schemas")
		}
		for i, x := range a {
			if !isSchema(x) {
				return c.errAt(fmt.Sprintf("%s/%d", at, i), "%s/%d must be %s, got %s", kw, i, schemaWord, describe(x))
			}
		}
		return nil
	}
	stringArray := func(x any, name string, nonEmpty bool) error {
		a, ok := x.([]any)
		want := "an array of unique strings"
		if nonEmpty {
			want = "a non-empty array of unique strings"
		}
		if !ok || (nonEmpty && len(a) == 0) {
			return c.errAt(at, "%s must be %s, got %s", name, want, describe(x))
		}
		seen := map[string]bool{}
		for _, s := range a {
			str, ok := s.(string)
			if !ok || seen[str] {
				return c.errAt(at, "%s must be %s, got %s", name, want, describe(x))
			}
			seen[str] = true
		}
		return nil
	}
	str := func() error {
		if _, ok := v.(string); !ok {
			return bad("a string")
		}
		return nil
	}
	boolean := func() error {
		if _, ok := v.(bool); !ok {
			return bad("a boolean")
		}
		return nil
	}
	number := func() error {
		if _, ok := toDecimal(v); !ok {
			return bad("a number")
		}
		return nil
	}
	count := func() error {
		n, ok := toDecimal(v)
		if !ok || !n.isInteger() || n.neg {
			return bad("a non-negative integer")
		}
		return nil
	}
	uriRef := func() error {
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		if err := checkURIReference(s); err != nil {
			return c.errAt(at, "%s %q is not a URI reference: %v", kw, s, err)
		}
		return nil
	}
	anchorName := func(re *regexp.Regexp) error {
		s, ok := v.(string)
		if !ok || !re.MatchString(s) {
			return bad("an anchor name (" + re.String() + ")")
		}
		return nil
	}

	switch kw {
	case "$schema":
		return str()
	case "title", "description", "format":
		return str()
	case "multipleOf":
		n, ok := toDecimal(v)
		if !ok || n.sign() <= 0 {
			return bad("a number greater than 0")
		}
		return nil
	case "maximum", "minimum":
		return number()
	case "exclusiveMaximum", "exclusiveMinimum":
		if d == Draft4 {
			if err := boolean(); err != nil {
				return err
			}
			bound := strings.ToLower(kw[9:10]) + kw[10:] // maximum, minimum
			if _, ok := obj[bound]; !ok {
				return c.errAt(at, "%s needs %s beside it in draft 4", kw, bound)
			}
			return nil
		}
		return number()
	case "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties":
		return count()
	case "pattern":
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		if _, err := regexp.Compile(s); err != nil {
			return c.errAt(at, "pattern %q is not a regular expression Go accepts: %v", s, err)
		}
		return nil
	case "additionalItems", "additionalProperties":
		if _, ok := v.(bool); ok {
			return nil
		}
		return schema()
	case "not":
		return schema()
	case "items":
		if d >= Draft2020 {
			return schema()
		}
		if _, ok := v.([]any); ok {
			return schemaArray()
		}
		return schema()
	case "uniqueItems":
		return boolean()
	case "required":
		return stringArray(v, kw, d == Draft4)
	case "definitions", "properties", "patternProperties":
		if err := schemaMap(); err != nil {
			return err
		}
		if kw == "patternProperties" {
			for _, k := range sortedKeys(v.(map[string]any)) {
				if _, err := regexp.Compile(k); err != nil {
					return c.errAt(at, "patternProperties key %q is not a regular expression Go accepts: %v", k, err)
				}
			}
		}
		return nil
	case "dependencies":
		m, ok := v.(map[string]any)
		if !ok {
			return bad("an object")
		}
		for _, k := range sortedKeys(m) {
			x := m[k]
			if _, isArr := x.([]any); isArr {
				if err := stringArray(x, "dependencies/"+k, d == Draft4); err != nil {
					return err
				}
			} else if !isSchema(x) {
				return c.errAt(appendPtr(at, k), "dependencies/%s must be %s or an array of strings, got %s", k, schemaWord, describe(x))
			}
		}
		return nil
	case "enum":
		a, ok := v.([]any)
		if !ok {
			return bad("an array")
		}
		if d < Draft2019 {
			if len(a) == 0 {
				return bad("a non-empty array of unique values")
			}
			if i, j := firstDuplicate(a); i >= 0 {
				return c.errAt(at, "enum must have unique values, but items %d and %d are equal", i, j)
			}
		}
		return nil
	case "type":
		if s, ok := v.(string); ok {
			if !simpleTypes[s] {
				return c.errAt(at, "type %q is not a JSON Schema type (array, boolean, integer, null, number, object, string)", s)
			}
			return nil
		}
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			return bad("a type name or a non-empty array of them")
		}
		seen := map[string]bool{}
		for _, x := range a {
			s, ok := x.(string)
			if !ok || !simpleTypes[s] || seen[s] {
				return c.errAt(at, "type must be a type name or an array of unique type names, got %s", describe(v))
			}
			seen[s] = true
		}
		return nil
	case "allOf", "anyOf", "oneOf":
		return schemaArray()
	case "$ref":
		return uriRef()
	case "id":
		if d == Draft4 {
			return str()
		}
	case "$id":
		if d >= Draft6 {
			if err := uriRef(); err != nil {
				return err
			}
			if s := v.(string); d >= Draft2019 && strings.Contains(strings.TrimSuffix(s, "#"), "#") {
				return c.errAt(at, "$id %q must not have a fragment (use $anchor)", s)
			}
		}
	}
	if d >= Draft6 {
		switch kw {
		case "contains", "propertyNames":
			return schema()
		}
	}
	if d >= Draft7 {
		switch kw {
		case "$comment", "contentMediaType", "contentEncoding":
			return str()
		case "readOnly", "writeOnly":
			return boolean()
		case "examples":
			if _, ok := v.([]any); !ok {
				return bad("an array")
			}
		case "if", "then", "else":
			return schema()
		}
	}
	if d >= Draft2019 {
		switch kw {
		case "$anchor":
			if d == Draft2019 {
				return anchorName(anchor2019())
			}
			return anchorName(anchor2020())
		case "$recursiveRef", "$dynamicRef":
			return uriRef()
		case "$recursiveAnchor":
			if d == Draft2019 {
				return boolean()
			}
			return anchorName(anchor2020())
		case "$dynamicAnchor":
			if d >= Draft2020 {
				return anchorName(anchor2020())
			}
		case "$vocabulary":
			m, ok := v.(map[string]any)
			if !ok {
				return bad("an object of booleans")
			}
			for _, k := range sortedKeys(m) {
				if _, ok := m[k].(bool); !ok {
					return bad("an object of booleans")
				}
			}
		case "$defs", "dependentSchemas":
			return schemaMap()
		case "maxContains", "minContains":
			return count()
		case "dependentRequired":
			m, ok := v.(map[string]any)
			if !ok {
				return bad("an object of string arrays")
			}
			for _, k := range sortedKeys(m) {
				if err := stringArray(m[k], "dependentRequired/"+k, false); err != nil {
					return err
				}
			}
		case "unevaluatedItems", "unevaluatedProperties", "contentSchema":
			return schema()
		case "deprecated":
			return boolean()
		}
	}
	if d >= Draft2020 && kw == "prefixItems" {
		return schemaArray()
	}
	return nil
}

// describe is a value's JSON type with the value when short, for messages.
func describe(v any) string {
	t := jsonTypeName(v)
	switch v.(type) {
	case map[string]any, []any, nil:
		return t
	}
	s := fmt.Sprint(v)
	if str, ok := v.(string); ok {
		s = fmt.Sprintf("%q", str)
	}
	if len(s) > 40 {
		return t
	}
	return t + " " + s
}
