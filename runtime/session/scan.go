package session

import (
	"encoding/json"
	"errors"
	"fmt"
)

// head is what loading needs of an entry line without decoding it.
type head struct {
	typ, id, parentID, timestamp string
	hasID                        bool
	tsMillis                     float64 // a numeric timestamp
	tsNumeric                    bool
	message                      []byte // the message member's JSON, a slice of the line
}

var errSyntax = errors.New("not a JSON object")

// scanHead reads the top-level members type, id, parentId and timestamp of
// the JSON object line and skips every other value without decoding it, so
// indexing a large session costs one quick pass over its bytes; the rest
// of an entry is decoded when it is used. It fails on a line that is not
// an object or is cut short.
func scanHead(line []byte) (head, error) {
	var h head
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return h, errSyntax
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return h, nil
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return h, fmt.Errorf("%w: a key was expected at byte %d", errSyntax, i)
		}
		kEnd, err := skipString(line, i)
		if err != nil {
			return h, err
		}
		key := line[i+1 : kEnd-1]
		i = skipSpace(line, kEnd)
		if i >= len(line) || line[i] != ':' {
			return h, fmt.Errorf("%w: ':' expected at byte %d", errSyntax, i)
		}
		i = skipSpace(line, i+1)
		vStart := i
		if i, err = skipValue(line, i); err != nil {
			return h, err
		}
		val := line[vStart:i]
		switch string(key) {
		case "type":
			h.typ, _ = unquote(val)
		case "id":
			h.id, h.hasID = unquote(val)
		case "parentId":
			h.parentID, _ = unquote(val)
		case "message":
			h.message = val[:len(val):len(val)]
		case "timestamp":
			if s, ok := unquote(val); ok {
				h.timestamp = s
			} else if json.Unmarshal(val, &h.tsMillis) == nil {
				h.tsNumeric = true
			}
		}
		i = skipSpace(line, i)
		if i >= len(line) {
			return h, fmt.Errorf("%w: cut short", errSyntax)
		}
		switch line[i] {
		case ',':
			i = skipSpace(line, i+1)
		case '}':
			if j := skipSpace(line, i+1); j != len(line) {
				return h, fmt.Errorf("%w: text after the object", errSyntax)
			}
			return h, nil
		default:
			return h, fmt.Errorf("%w: ',' or '}' expected at byte %d", errSyntax, i)
		}
	}
}

// unquote returns the string value val holds; ok false when it is not a
// string (null, a number, ...).
func unquote(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	inner := val[1 : len(val)-1]
	for _, c := range inner {
		if c == '\\' {
			var s string
			if json.Unmarshal(val, &s) != nil {
				return "", false
			}
			return s, true
		}
	}
	return string(inner), true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("%w: unterminated string", errSyntax)
}

// skipValue returns the index after the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, fmt.Errorf("%w: value expected", errSyntax)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipString(b, j)
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
		return 0, fmt.Errorf("%w: unterminated object or array", errSyntax)
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
		return 0, fmt.Errorf("%w: value expected at byte %d", errSyntax, i)
	}
	switch lit := string(b[i:j]); {
	case lit == "null" || lit == "true" || lit == "false":
	case b[i] == '-' || (b[i] >= '0' && b[i] <= '9'):
	default:
		return 0, fmt.Errorf("%w: %q is not a JSON value", errSyntax, lit)
	}
	return j, nil
}
