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
