package session

import (
	"encoding/json"
	"unsafe"

	"github.com/pi-go/pi/internal/jsonscan"
)

// head is what loading needs of an entry line without decoding it.
type head struct {
	typ, id, parentID, timestamp string
	hasID                        bool
	tsMillis                     float64 // a numeric timestamp
	tsNumeric                    bool
	message                      []byte // the message member's JSON, a slice of the line
}

// scanHead reads the top-level members type, id, parentId and timestamp of
// the JSON object line and skips every other value without decoding it, so
// indexing a large session costs one quick pass over its bytes; the rest
// of an entry is decoded when it is used. It fails on a line that is not
// an object or is cut short. With view, its strings (without escapes) are
// views of line, which must then never change (a session file's buffer).
func scanHead(line []byte, view bool) (head, error) {
	var h head
	err := jsonscan.Members(line, func(key, val []byte) error {
		switch string(key) {
		case "type":
			h.typ, _ = unquote(val, view)
		case "id":
			h.id, h.hasID = unquote(val, view)
		case "parentId":
			h.parentID, _ = unquote(val, view)
		case "message":
			h.message = val // its cap tells where in line it starts
		case "timestamp":
			if s, ok := unquote(val, view); ok {
				h.timestamp = s
			} else if json.Unmarshal(val, &h.tsMillis) == nil {
				h.tsNumeric = true
			}
		}
		return nil
	})
	return h, err
}

// unquote returns the string value val holds (with view, a view of val's
// bytes when it has no escape); ok false when it is not a string (null, a
// number, ...).
func unquote(val []byte, view bool) (string, bool) {
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
	if view && len(inner) > 0 {
		return unsafe.String(&inner[0], len(inner)), true
	}
	return string(inner), true
}
