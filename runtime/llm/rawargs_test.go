package llm

import (
	"bytes"
	"encoding/json"
	"testing"
)

// stringToolCall is ToolCall as it was, with the arguments a string.
type stringToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// checkArgumentsJSON: a ToolCall is written exactly as when its arguments
// were a string, by json.Marshal and by an Encoder that does not escape
// HTML, and reads back to the same bytes.
func checkArgumentsJSON(t *testing.T, args []byte) {
	t.Helper()
	c := ToolCall{ID: "c", Name: "n", Arguments: args}
	old := stringToolCall{ID: "c", Name: "n", Arguments: string(args)}
	got, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(old)
	if !bytes.Equal(got, want) {
		t.Fatalf("json.Marshal(%q) = %s, want %s", args, got, want)
	}
	encode := func(v any) []byte {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	if g, w := encode(c), encode(old); !bytes.Equal(g, w) {
		t.Fatalf("Encoder without HTML escaping wrote %s, want %s", g, w)
	}
	var back ToolCall
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	var oldBack stringToolCall
	_ = json.Unmarshal(want, &oldBack)
	if string(back.Arguments) != oldBack.Arguments {
		t.Fatalf("read back %q, want %q", back.Arguments, oldBack.Arguments)
	}
}

func TestRawArgumentsJSON(t *testing.T) {
	for _, args := range []string{
		"", `{}`, `{"path":"a.txt"}`, `{"content":"<b> & </b>\n\t\"q\" \\"}`,
		"not json \x00\x01\x1f\x7f", "line\u2028sep\u2029", "bad utf-8 \xff\xfe \xe2\x82",
		`{"a":"é ✓ 😀"}`,
	} {
		checkArgumentsJSON(t, []byte(args))
	}
	checkArgumentsJSON(t, nil)
}

func FuzzRawArgumentsJSON(f *testing.F) {
	f.Add([]byte(`{"x":"<&>"}`))
	f.Add([]byte("\u2028\xff"))
	f.Fuzz(func(t *testing.T, args []byte) { checkArgumentsJSON(t, args) })
}
