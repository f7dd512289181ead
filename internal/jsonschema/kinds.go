package jsonschema

import (
	"fmt"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Kind is what failed: one type per keyword, with the data a caller needs
// to word its own message (Required.Missing, Type.Want, …).
type Kind interface {
	// Keyword is the keyword that failed ("required"), or "" for a
	// failure of the schema as a whole (a false schema, a group).
	Keyword() string
	// Message is the default English text of the failure. Numbers are
	// written as golang.org/x/text/message writes them for English
	// ("1,000", "1×10²¹"), the texts pi has always shown.
	Message() string
}

// english formats messages; its number forms are part of the texts.
var english = message.NewPrinter(language.English)

// Group is several failures of one schema; its Causes are the failures.
type Group struct{}

// SchemaFailed is the root of a validation error; Location is the schema's.
type SchemaFailed struct{ Location string }

// Not: the instance matched the "not" schema.
type Not struct{}

// AllOf: some "allOf" schemas failed (the causes).
type AllOf struct{}

// AnyOf: no "anyOf" schema matched (each one's failure is a cause).
type AnyOf struct{}

// OneOf: none matched (Subschemas nil; the causes say why) or two did
// (their indexes).
type OneOf struct{ Subschemas []int }

// FalseSchema: the schema is false.
type FalseSchema struct{}

// Budget: the validation used up its MaxSteps (Steps) and stopped; the
// schema is too costly to check.
type Budget struct{ Steps int }

// RefCycle: a reference leads back to a schema already applied to the
// same value.
type RefCycle struct {
	URL                                string
	KeywordLocation1, KeywordLocation2 string
}

// Type: the value's JSON type is not one of Want.
type Type struct {
	Got  string
	Want []string
}

// Enum: the value is none of Want.
type Enum struct {
	Got  any
	Want []any
}

// Const: the value is not Want.
type Const struct {
	Got  any
	Want any
}

// Format: the string is not of the format Want (drafts 4 to 7 assert
// formats).
type Format struct {
	Got  any
	Want string
	Err  error
}

// Reference: the schema a reference ($ref) leads to failed (the causes).
type Reference struct {
	RefKeyword string
	URL        string
}

// MinProperties and the other count kinds: Got is the count, Want the bound.
type MinProperties struct{ Got, Want int }

// MaxProperties is maxProperties' failure.
type MaxProperties struct{ Got, Want int }

// MinItems is minItems' failure.
type MinItems struct{ Got, Want int }

// MaxItems is maxItems' failure.
type MaxItems struct{ Got, Want int }

// AdditionalItems: the last Count items are not allowed.
type AdditionalItems struct{ Count int }

// Required: properties the object lacks.
type Required struct{ Missing []string }

// Dependency: Prop is present and (draft ≤ 2019 "dependencies") requires
// the Missing properties.
type Dependency struct {
	Prop    string
	Missing []string
}

// DependentRequired is Dependency for "dependentRequired".
type DependentRequired struct {
	Prop    string
	Missing []string
}

// AdditionalProperties: properties no schema allows.
type AdditionalProperties struct{ Properties []string }

// PropertyNames: a property name failed "propertyNames" (the causes, at
// the name's own location, which is the root).
type PropertyNames struct{ Property string }

// UniqueItems: two items are equal (their indexes).
type UniqueItems struct{ Duplicates [2]int }

// Contains: no item matched "contains".
type Contains struct{}

// MinContains: fewer than Want items matched; Got are their indexes.
type MinContains struct {
	Got  []int
	Want int
}

// MaxContains: more than Want items matched; Got are their indexes.
type MaxContains struct {
	Got  []int
	Want int
}

// MinLength: the string has fewer than Want code points.
type MinLength struct{ Got, Want int }

// MaxLength: the string has more than Want code points.
type MaxLength struct{ Got, Want int }

// Pattern: the string does not match the regular expression Want.
type Pattern struct {
	Got  string
	Want string
}

// Minimum and the other bounds: Got is the value, Want the bound.
type Minimum struct{ Got, Want float64 }

// Maximum is maximum's failure.
type Maximum struct{ Got, Want float64 }

// ExclusiveMinimum is exclusiveMinimum's failure.
type ExclusiveMinimum struct{ Got, Want float64 }

// ExclusiveMaximum is exclusiveMaximum's failure.
type ExclusiveMaximum struct{ Got, Want float64 }

// MultipleOf: the value is not a multiple of Want.
type MultipleOf struct{ Got, Want float64 }

func (*Group) Keyword() string                { return "" }
func (*SchemaFailed) Keyword() string         { return "" }
func (*Not) Keyword() string                  { return "not" }
func (*AllOf) Keyword() string                { return "allOf" }
func (*AnyOf) Keyword() string                { return "anyOf" }
func (*OneOf) Keyword() string                { return "oneOf" }
func (*FalseSchema) Keyword() string          { return "" }
func (*Budget) Keyword() string               { return "" }
func (*RefCycle) Keyword() string             { return "" }
func (*Type) Keyword() string                 { return "type" }
func (*Enum) Keyword() string                 { return "enum" }
func (*Const) Keyword() string                { return "const" }
func (*Format) Keyword() string               { return "format" }
func (k *Reference) Keyword() string          { return k.RefKeyword }
func (*MinProperties) Keyword() string        { return "minProperties" }
func (*MaxProperties) Keyword() string        { return "maxProperties" }
func (*MinItems) Keyword() string             { return "minItems" }
func (*MaxItems) Keyword() string             { return "maxItems" }
func (*AdditionalItems) Keyword() string      { return "additionalItems" }
func (*Required) Keyword() string             { return "required" }
func (*Dependency) Keyword() string           { return "dependencies" }
func (*DependentRequired) Keyword() string    { return "dependentRequired" }
func (*AdditionalProperties) Keyword() string { return "additionalProperties" }
func (*PropertyNames) Keyword() string        { return "propertyNames" }
func (*UniqueItems) Keyword() string          { return "uniqueItems" }
func (*Contains) Keyword() string             { return "contains" }
func (*MinContains) Keyword() string          { return "minContains" }
func (*MaxContains) Keyword() string          { return "maxContains" }
func (*MinLength) Keyword() string            { return "minLength" }
func (*MaxLength) Keyword() string            { return "maxLength" }
func (*Pattern) Keyword() string              { return "pattern" }
func (*Minimum) Keyword() string              { return "minimum" }
func (*Maximum) Keyword() string              { return "maximum" }
func (*ExclusiveMinimum) Keyword() string     { return "exclusiveMinimum" }
func (*ExclusiveMaximum) Keyword() string     { return "exclusiveMaximum" }
func (*MultipleOf) Keyword() string           { return "multipleOf" }

func (*Group) Message() string { return english.Sprintf("validation failed") }
func (k *SchemaFailed) Message() string {
	return english.Sprintf("jsonschema validation failed with %s", quote(k.Location))
}
func (*Not) Message() string   { return english.Sprintf("'not' failed") }
func (*AllOf) Message() string { return english.Sprintf("'allOf' failed") }
func (*AnyOf) Message() string { return english.Sprintf("'anyOf' failed") }
func (k *OneOf) Message() string {
	if len(k.Subschemas) == 0 {
		return english.Sprintf("'oneOf' failed, none matched")
	}
	return english.Sprintf("'oneOf' failed, subschemas %d, %d matched", k.Subschemas[0], k.Subschemas[1])
}
func (*FalseSchema) Message() string { return english.Sprintf("false schema") }
func (k *Budget) Message() string {
	return english.Sprintf("validation stopped after %d steps: the schema is too costly to check (anyOf or oneOf nested through $ref?)", k.Steps)
}
func (k *RefCycle) Message() string {
	return english.Sprintf("both %s and %s resolve to %q causing reference cycle", k.KeywordLocation1, k.KeywordLocation2, k.URL)
}
func (k *Type) Message() string {
	return english.Sprintf("got %s, want %s", k.Got, strings.Join(k.Want, " or "))
}
func (k *Enum) Message() string {
	for _, w := range k.Want {
		switch w.(type) {
		case []any, map[string]any:
			return english.Sprintf("'enum' failed")
		}
	}
	if len(k.Want) == 1 {
		return english.Sprintf("value must be %s", display(k.Want[0]))
	}
	want := make([]string, len(k.Want))
	for i, w := range k.Want {
		want[i] = display(w)
	}
	return english.Sprintf("value must be one of %s", strings.Join(want, ", "))
}
func (k *Const) Message() string {
	switch k.Want.(type) {
	case []any, map[string]any:
		return english.Sprintf("'const' failed")
	}
	return english.Sprintf("value must be %s", display(k.Want))
}
func (k *Format) Message() string {
	return english.Sprintf("%s is not valid %s: %v", display(k.Got), k.Want, formatErrorText(k.Err))
}
func (*Reference) Message() string { return english.Sprintf("validation failed") }
func (k *MinProperties) Message() string {
	return english.Sprintf("minProperties: got %d, want %d", k.Got, k.Want)
}
func (k *MaxProperties) Message() string {
	return english.Sprintf("maxProperties: got %d, want %d", k.Got, k.Want)
}
func (k *MinItems) Message() string {
	return english.Sprintf("minItems: got %d, want %d", k.Got, k.Want)
}
func (k *MaxItems) Message() string {
	return english.Sprintf("maxItems: got %d, want %d", k.Got, k.Want)
}
func (k *AdditionalItems) Message() string {
	return english.Sprintf("last %d additionalItem(s) not allowed", k.Count)
}
func (k *Required) Message() string {
	if len(k.Missing) == 1 {
		return english.Sprintf("missing property %s", quote(k.Missing[0]))
	}
	return english.Sprintf("missing properties %s", joinQuoted(k.Missing))
}
func (k *Dependency) Message() string {
	return english.Sprintf("properties %s required, if %s exists", joinQuoted(k.Missing), quote(k.Prop))
}
func (k *DependentRequired) Message() string {
	return english.Sprintf("properties %s required, if %s exists", joinQuoted(k.Missing), quote(k.Prop))
}
func (k *AdditionalProperties) Message() string {
	return english.Sprintf("additional properties %s not allowed", joinQuoted(k.Properties))
}
func (k *PropertyNames) Message() string {
	return english.Sprintf("invalid propertyName %s", quote(k.Property))
}
func (k *UniqueItems) Message() string {
	return english.Sprintf("items at %d and %d are equal", k.Duplicates[0], k.Duplicates[1])
}
func (*Contains) Message() string { return english.Sprintf("no items match contains schema") }
func (k *MinContains) Message() string {
	if len(k.Got) == 0 {
		return english.Sprintf("min %d items required to match contains schema, but none matched", k.Want)
	}
	return english.Sprintf("min %d items required to match contains schema, but matched %d items at %v", k.Want, len(k.Got), indexList(k.Got))
}
func (k *MaxContains) Message() string {
	return english.Sprintf("max %d items required to match contains schema, but matched %d items at %v", k.Want, len(k.Got), indexList(k.Got))
}
func (k *MinLength) Message() string {
	return english.Sprintf("minLength: got %d, want %d", k.Got, k.Want)
}
func (k *MaxLength) Message() string {
	return english.Sprintf("maxLength: got %d, want %d", k.Got, k.Want)
}
func (k *Pattern) Message() string {
	return english.Sprintf("%s does not match pattern %s", quote(k.Got), quote(k.Want))
}
func (k *Minimum) Message() string { return english.Sprintf("minimum: got %v, want %v", k.Got, k.Want) }
func (k *Maximum) Message() string { return english.Sprintf("maximum: got %v, want %v", k.Got, k.Want) }
func (k *ExclusiveMinimum) Message() string {
	return english.Sprintf("exclusiveMinimum: got %v, want %v", k.Got, k.Want)
}
func (k *ExclusiveMaximum) Message() string {
	return english.Sprintf("exclusiveMaximum: got %v, want %v", k.Got, k.Want)
}
func (k *MultipleOf) Message() string {
	return english.Sprintf("multipleOf: got %v, want %v", k.Got, k.Want)
}

// indexList is "1 2 3": the indexes as fmt prints a slice, unbracketed.
func indexList(ix []int) string {
	s := fmt.Sprintf("%v", ix)
	return s[1 : len(s)-1]
}

// quote is a Go-quoted string in single quotes: double quotes unescaped,
// single quotes escaped.
func quote(s string) string {
	s = fmt.Sprintf("%q", s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

func joinQuoted(a []string) string {
	var b strings.Builder
	for i, s := range a {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(s))
	}
	return b.String()
}

// display is a primitive value as messages show it.
func display(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case []any, map[string]any:
		return "value"
	}
	return fmt.Sprintf("%v", v)
}
