package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestMembers(t *testing.T) {
	var got []string
	err := Members([]byte(` {"a" : 1, "b\"c":{"x":[1,"]}"]}, "d":"e"} `), func(key, val []byte) error {
		got = append(got, string(key)+"="+string(val))
		return nil
	})
	want := []string{`a=1`, `b\"c={"x":[1,"]}"]}`, `d="e"`}
	if err != nil || len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("Members = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{`[1]`, `{"a"}`, `{"a":1 "b":2}`, `{"a":1} x`, `{"a":"x`} {
		if err := Members([]byte(bad), func(_, _ []byte) error { return nil }); !errors.Is(err, ErrSyntax) {
			t.Errorf("Members(%s) = %v, want ErrSyntax", bad, err)
		}
	}
}

// TestHasSpace: false exactly when json.Compact gives the text back.
func TestHasSpace(t *testing.T) {
	for _, s := range []string{`{}`, `{"a":"b c"}`, `{"a": 1}`, "[1,\n2]", `{"a":"\" x"}`, `"\\" `, ` {}`, `{"a":"\\\\"}`} {
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if got, want := HasSpace([]byte(s)), b.String() != s; got != want {
			t.Errorf("HasSpace(%s) = %v, want %v", s, got, want)
		}
	}
}

// FuzzString holds String to the byte-by-byte rule it implements faster:
// a backslash escapes the byte after it, the first quote not escaped ends
// the string.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"a\\"b`, `"\\\\\"x"`, `"\`, `"abc`, `""`, `"\\\"\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			return
		}
		want := -1
		for j := 1; j < len(b); j++ {
			if b[j] == '\\' {
				j++
			} else if b[j] == '"' {
				want = j + 1
				break
			}
		}
		got, err := String(b, 0)
		if err != nil {
			got = -1
		}
		if got != want {
			t.Fatalf("String(%q) = %d, want %d", b, got, want)
		}
	})
}
