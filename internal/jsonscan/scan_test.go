package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzSkipIsValid: Skip takes a whole text exactly when encoding/json
// calls it valid JSON (short of Skip's depth limit of 100).
func FuzzSkipIsValid(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `null`, `true`, `false`, `0`, `-0.5e+3`, `01`, `1.`, `.5`, `"a\u00e9\n"`, `"\x"`, `"\u12"`, "\"\x01\"",
		`{"a":[1,{"b":null}],"c":"d"}`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, ` [ ] `, `{"a":1}x`, "\"\xff\"", `nul`, `tru`, `-`, `1e`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Scanner
		s.Reset(data)
		got := s.Skip() && s.End()
		want := json.Valid(data)
		deep := strings.Count(string(data), "[")+strings.Count(string(data), "{") > 100
		if got != want && !(deep && want) {
			t.Fatalf("Skip(%q) = %v, json.Valid = %v", data, got, want)
		}
	})
}

// TestObjectDeclines: the keys encoding/json would take differently
// fail, so that the caller hands the text to encoding/json.
func TestObjectDeclines(t *testing.T) {
	for _, tt := range []struct {
		text string
		ok   bool
	}{
		{`{"id":1,"other":[{"x":2}]}`, true},
		{`{"ID":1}`, false},          // another letter case
		{`{"id":1,"id":2}`, false},   // twice
		{`{"i\u0064":1}`, false},     // an escape
		{`{"idé":1}`, false},         // outside ASCII
		{`{"id":1,"Other":2}`, true}, // unknown keys are skipped in any case
		{`null`, true},
	} {
		var s Scanner
		s.Reset([]byte(tt.text))
		ok := s.Object([]string{"id"}, func(int) bool { _, ok := s.Integer(); return ok }) && s.End()
		if ok != tt.ok {
			t.Errorf("Object(%s) = %v, want %v", tt.text, ok, tt.ok)
		}
	}
}
