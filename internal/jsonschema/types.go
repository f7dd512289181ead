package jsonschema

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"sort"
)

// typeSet is a set of JSON Schema types.
type typeSet int

const (
	tNull typeSet = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeNames = []struct {
	t    typeSet
	name string
}{{tNull, "null"}, {tBoolean, "boolean"}, {tNumber, "number"}, {tInteger, "integer"}, {tString, "string"}, {tArray, "array"}, {tObject, "object"}}

func (t typeSet) String() string {
	for _, tn := range typeNames {
		if tn.t == t {
			return tn.name
		}
	}
	return ""
}

// names lists the set in the order messages use.
func (t typeSet) names() []string {
	var out []string
	for _, tn := range typeNames {
		if t&tn.t != 0 {
			out = append(out, tn.name)
		}
	}
	return out
}

func typeFromName(s string) typeSet {
	for _, tn := range typeNames {
		if tn.name == s {
			return tn.t
		}
	}
	return 0
}

// typesOf is the set a "type" value names (unknown names ignored).
func typesOf(v any) typeSet {
	var t typeSet
	switch v := v.(type) {
	case string:
		t = typeFromName(v)
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				t |= typeFromName(s)
			}
		}
	}
	return t
}

// typeOf is a value's JSON type (never integer), 0 for a Go value that
// is not JSON.
func typeOf(v any) typeSet {
	switch v := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBoolean
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return tNumber
	case float32:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0
		}
		return tNumber
	case json.Number, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return tNumber
	case string:
		return tString
	case []any:
		return tArray
	case map[string]any:
		return tObject
	}
	return 0
}

func jsonTypeName(v any) string {
	if t := typeOf(v); t != 0 {
		return t.String()
	}
	return fmt.Sprintf("%T", v)
}

// InvalidValue: the instance holds a Go value that is not JSON.
type InvalidValue struct{ Value any }

// Keyword is "".
func (*InvalidValue) Keyword() string { return "" }

// Message names the Go type.
func (k *InvalidValue) Message() string { return english.Sprintf("invalid jsonType %T", k.Value) }

func isInteger(v any) bool {
	d, ok := toDecimal(v)
	return ok && d.isInteger()
}

// equal is JSON equality, numbers by value (1 == 1.0).
func equal(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !equal(va, vb) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equal(a[i], b[i]) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case string:
		b, ok := b.(string)
		return ok && a == b
	}
	if typeOf(a) != tNumber || typeOf(b) != tNumber {
		return false
	}
	da, ok1 := toDecimal(a)
	db, ok2 := toDecimal(b)
	return ok1 && ok2 && da.cmp(db) == 0
}

var hashSeed = maphash.MakeSeed()

// firstDuplicate returns the first pair of equal items (j < i, smallest
// i, then smallest j), or -1, -1.
func firstDuplicate(arr []any) (int, int) {
	if len(arr) <= 20 {
		for i := 1; i < len(arr); i++ {
			for j := 0; j < i; j++ {
				if equal(arr[i], arr[j]) {
					return j, i
				}
			}
		}
		return -1, -1
	}
	seen := make(map[uint64][]int, len(arr))
	var h maphash.Hash
	h.SetSeed(hashSeed)
	for i, item := range arr {
		h.Reset()
		hashValue(&h, item)
		sum := h.Sum64()
		for _, j := range seen[sum] {
			if equal(item, arr[j]) {
				return j, i
			}
		}
		seen[sum] = append(seen[sum], i)
	}
	return -1, -1
}

// hashValue hashes a value so that equal values hash alike.
func hashValue(h *maphash.Hash, v any) {
	switch v := v.(type) {
	case map[string]any:
		h.WriteByte('{')
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			h.WriteString(k)
			h.WriteByte(0)
			hashValue(h, v[k])
		}
	case []any:
		h.WriteByte('[')
		for _, x := range v {
			hashValue(h, x)
		}
	case nil:
		h.WriteByte('n')
	case bool:
		if v {
			h.WriteByte('t')
		} else {
			h.WriteByte('f')
		}
	case string:
		h.WriteByte('s')
		h.WriteString(v)
		h.WriteByte(0)
	default:
		if d, ok := toDecimal(v); ok {
			h.WriteByte('#')
			h.WriteString(d.canonical())
			h.WriteByte(0)
		}
	}
}
