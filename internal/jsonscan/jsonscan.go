// Package jsonscan walks the members of a JSON object without decoding
// them: each value comes as the span of the input it takes, so a caller
// decodes only what it needs and can keep a large value (a 20 MB argument
// text) without copying it.
package jsonscan

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrSyntax is wrapped by every error of the scanner.
var ErrSyntax = errors.New("not a JSON object")

// Members calls fn with the raw key (the bytes between its quotes, escapes
// not decoded) and the raw value of each member of the object b holds,
// in order; white space may surround the object. It stops at fn's first
// error and returns it. It checks the object's structure, not every value
// inside it (nor what follows an empty object): input that json.Valid
// accepts never fails here.
func Members(b []byte, fn func(key, val []byte) error) error {
	i := Space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ErrSyntax
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil // an empty object; what follows it is not looked at
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return fmt.Errorf("%w: a key was expected at byte %d", ErrSyntax, i)
		}
		kEnd, err := String(b, i)
		if err != nil {
			return err
		}
		key := b[i+1 : kEnd-1]
		i = Space(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return fmt.Errorf("%w: ':' expected at byte %d", ErrSyntax, i)
		}
		i = Space(b, i+1)
		vStart := i
		if i, err = Value(b, i); err != nil {
			return err
		}
		if err := fn(key, b[vStart:i]); err != nil {
			return err
		}
		i = Space(b, i)
		if i >= len(b) {
			return fmt.Errorf("%w: cut short", ErrSyntax)
		}
		switch b[i] {
		case ',':
			i = Space(b, i+1)
		case '}':
			if j := Space(b, i+1); j != len(b) {
				return fmt.Errorf("%w: text after the object", ErrSyntax)
			}
			return nil
		default:
			return fmt.Errorf("%w: ',' or '}' expected at byte %d", ErrSyntax, i)
		}
	}
}

// Space returns the index of the first byte from i on that is not JSON
// white space.
func Space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// String returns the index after the string starting at b[i] ('"').
func String(b []byte, i int) (int, error) {
	// The next quote ends the string unless an odd run of backslashes
	// escapes it (bytes.IndexByte is much faster than a loop over bytes).
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
	return 0, fmt.Errorf("%w: unterminated string", ErrSyntax)
}

// Value returns the index after the JSON value starting at b[i].
func Value(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, fmt.Errorf("%w: value expected", ErrSyntax)
	}
	switch b[i] {
	case '"':
		return String(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := String(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("%w: unterminated object or array", ErrSyntax)
	}
	j := i
	for j < len(b) {
		c := b[j]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			break
		}
		j++
	}
	if j == i {
		return 0, fmt.Errorf("%w: value expected at byte %d", ErrSyntax, i)
	}
	switch lit := string(b[i:j]); {
	case lit == "null" || lit == "true" || lit == "false":
	case b[i] == '-' || (b[i] >= '0' && b[i] <= '9'):
	default:
		return 0, fmt.Errorf("%w: %q is not a JSON value", ErrSyntax, lit)
	}
	return j, nil
}

// HasSpace reports whether the JSON text b has white space outside its
// strings: false means json.Compact would give b back as it is (or refuse
// it), so b itself can be used, not a compacted copy.
func HasSpace(b []byte) bool {
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return true
		}
	}
	return false
}
