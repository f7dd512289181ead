package session

import (
	"encoding/json"
	"testing"
)

// scanHead agrees with encoding/json on the members it reads, whatever
// their order and escaping and whatever the skipped values hold, and
// rejects what is not one whole object.
func TestScanHead(t *testing.T) {
	good := []string{
		`{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"x"}}`,
		`{"message":{"content":[{"type":"text","text":"} ] \" { [ \\\" , :"}]},"timestamp":"t","parentId":"p","id":"i\u0064","type":"message"}`,
		` { "type" : "custom" , "customType":"c","data":{"a":[1,2,{"b":null}],"s":"\\"} , "id":"x", "parentId":"y","timestamp":1735689600000 } `,
		`{"type":"message","id":"a","parentId":"b","timestamp":"t","n":-1.5e3,"t":true,"f":false,"z":null,"arr":[]}`,
		`{}`,
	}
	for _, line := range good {
		h, err := scanHead([]byte(line), true)
		if err != nil {
			t.Errorf("scanHead(%s): %v", line, err)
			continue
		}
		var j struct {
			Type      string  `json:"type"`
			ID        *string `json:"id"`
			ParentID  *string `json:"parentId"`
			Timestamp any     `json:"timestamp"`
		}
		if err := json.Unmarshal([]byte(line), &j); err != nil {
			t.Fatalf("test line %s: %v", line, err)
		}
		if h.typ != j.Type || h.hasID != (j.ID != nil) || (j.ID != nil && h.id != *j.ID) ||
			(j.ParentID != nil && h.parentID != *j.ParentID) || (j.ParentID == nil && h.parentID != "") {
			t.Errorf("scanHead(%s) = %+v, json says %+v", line, h, j)
		}
		switch ts := j.Timestamp.(type) {
		case string:
			if h.timestamp != ts {
				t.Errorf("timestamp %q, want %q", h.timestamp, ts)
			}
		case float64:
			if !h.tsNumeric || h.tsMillis != ts {
				t.Errorf("numeric timestamp %v", h)
			}
		}
	}
	bad := []string{
		``, `[]`, `"x"`, `{"type":"message","id":"a"`, `{"type":"message","id":"a",}`, `{"type" "x"}`,
		`{"type":"x","id":"unterminated}`, `{"a":{"b":[1,2}`, `{"a":BROKEN}`, `{"a":1} trailing`, `{type:"x"}`,
		`{"a":"b"`, `{"a":`, `{"a":[{"b":"}]}"}`,
	}
	for _, line := range bad {
		if _, err := scanHead([]byte(line), true); err == nil {
			t.Errorf("scanHead(%q) accepted a line that is not one object", line)
		}
	}
}
