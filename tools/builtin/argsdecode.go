package builtin

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// fromTree fills *dst (a pointer to a tool's argument struct) from a JSON
// value as the pipeline's validation parsed it (tool.Call.Parsed:
// map[string]any, []any, string, json.Number, bool, nil), sharing its
// strings, so arguments are not parsed a second time. It handles exactly what encoding/json would
// decode without an error and the same way — fields named by their exact
// json tag, strings, bools, floats, ints, pointers, slices and nested
// structs — and reports false for anything else (a key that only matches a
// field case-insensitively, an unknown field when strict, a type or range
// error, a kind it does not know). The caller then decodes the raw bytes
// with encoding/json, which has the final word and the error texts.
func fromTree(tree any, dst any, strict bool) bool {
	v := reflect.ValueOf(dst).Elem()
	return setValue(v, tree, strict)
}

func setValue(v reflect.Value, x any, strict bool) bool {
	if x == nil {
		switch v.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			v.SetZero()
		}
		return true // encoding/json leaves other kinds as they are
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return setValue(v.Elem(), x, strict)
	case reflect.String:
		s, ok := x.(string)
		if !ok || v.Type() == rawMessageType {
			return false
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := x.(bool)
		if !ok {
			return false
		}
		v.SetBool(b)
	case reflect.Float64, reflect.Float32:
		n, ok := x.(json.Number)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(n), v.Type().Bits())
		if err != nil {
			return false
		}
		v.SetFloat(f)
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := x.(json.Number)
		if !ok {
			return false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || v.OverflowInt(i) {
			return false
		}
		v.SetInt(i)
	case reflect.Slice:
		a, ok := x.([]any)
		if !ok || v.Type().Elem().Kind() == reflect.Uint8 {
			return false
		}
		s := reflect.MakeSlice(v.Type(), len(a), len(a))
		for i, e := range a {
			if !setValue(s.Index(i), e, strict) {
				return false
			}
		}
		v.Set(s)
	case reflect.Struct:
		m, ok := x.(map[string]any)
		if !ok {
			return false
		}
		fields := structFields(v.Type())
		if fields == nil {
			return false
		}
		for k, e := range m {
			i, ok := fields.byName[k]
			if !ok {
				if strict || fields.foldMatch(k) {
					return false
				}
				continue // encoding/json ignores it too
			}
			if !setValue(v.Field(i), e, strict) {
				return false
			}
		}
	default:
		return false
	}
	return true
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// fieldSet maps a struct's json names to its field indexes.
type fieldSet struct {
	byName map[string]int
}

// foldMatch reports whether k names a field only case-insensitively (which
// encoding/json would fill; fromTree leaves that to it).
func (f *fieldSet) foldMatch(k string) bool {
	for name := range f.byName {
		if strings.EqualFold(name, k) {
			return true
		}
	}
	// encoding/json's folding also maps 'K' to the Kelvin sign and 'S' to
	// the long s; keys outside ASCII are left to it.
	for i := 0; i < len(k); i++ {
		if k[i] >= 0x80 {
			return true
		}
	}
	return false
}

var fieldSets sync.Map // reflect.Type → *fieldSet (nil: a shape fromTree leaves alone)

// structFields returns the json names of t's fields, or nil when t has a
// field fromTree does not handle (embedded, unexported with a tag, a tag
// option such as ",string").
func structFields(t reflect.Type) *fieldSet {
	if f, ok := fieldSets.Load(t); ok {
		return f.(*fieldSet)
	}
	fs := &fieldSet{byName: map[string]int{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous || !sf.IsExported() || name == "-" || name == "" || (opts != "" && opts != "omitempty") {
			fs = nil
			break
		}
		fs.byName[name] = i
	}
	fieldSets.Store(t, fs)
	return fs
}
