package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// treeCases are inputs where parseTree must agree with the schema
// library's decoder: escapes, surrogates, invalid UTF-8, control bytes,
// numbers, nesting and white space, each placed at every offset of the
// eight-byte scan by the padding loop in the test.
var treeCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `-12.0E-7`, `123456789012345678901234567890`,
	`""`, `"a"`, `" \t\n\r {}"`, `{"a":1,"b":[1,2,{"c":null}],"d":{"e":"f"}}`,
	` {"a" : [ true , false , null ] } `, "\n\t{\"x\":\"y\"}\r\n",
	`"\"\\\/\b\f\n\r\t"`, `"\u0041\u00e9\u20ac"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83dx"`,
	`"\ud83d\u0041"`, `"\uD83D\uDE00"`, `"a\u0000b"`, "\"caf\xc3\xa9\"", "\"\xff\"", "\"a\xffb\\n\"",
	"\"\xe2\x82\"", "\"\xe2\x82\\n\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"日本語のテキスト\"",
	`{"content":"line one\nline two\n\ttabbed \"quoted\" \\ back"}`,
	`[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]`,
	// invalid: the parse must refuse and the library must fail too
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`,
	`tru`, `nul`, `"abc`, `"a\"`, "\"a\x01b\"", "\"a\nb\"", `"\x"`, `"\'"`, `"\u12"`, `"\u12G4"`,
	`{} {}`, `{}x`, `[] 1`, `"a" "b"`, `NaN`, `Infinity`, `{"a":1}}`,
}

func libTree(t testing.TB, data []byte) (any, error) {
	t.Helper()
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// checkTree is the property: parseTree succeeds exactly when the library
// does (but for duplicate keys, which it leaves to the library) and builds
// the same value.
func checkTree(t testing.TB, data []byte) {
	t.Helper()
	want, libErr := libTree(t, data)
	got, ok := parseTree(data)
	if ok {
		if libErr != nil {
			t.Fatalf("parseTree(%q) accepted what the library refuses (%v)", data, libErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parseTree(%q) = %#v, library %#v", data, got, want)
		}
		return
	}
	if libErr == nil && !hasDuplicateKey(data) {
		t.Fatalf("parseTree(%q) refused what the library accepts as %#v", data, want)
	}
}

func TestParseTreeMatchesLibrary(t *testing.T) {
	for _, c := range treeCases {
		checkTree(t, []byte(c))
		// The same value after 1..9 bytes of padding and inside a long
		// string, so every special byte is met at every offset of a word.
		for pad := 1; pad <= 9; pad++ {
			checkTree(t, []byte(strings.Repeat(" ", pad)+c))
			if len(c) > 0 && c[0] == '"' {
				checkTree(t, []byte(`"`+strings.Repeat("x", pad)+c[1:]))
				checkTree(t, []byte(`{"k":"`+strings.Repeat("y", pad+8)+c[1:]+`}`))
			}
		}
	}
}

func TestParseTreeRefusesDuplicateKeys(t *testing.T) {
	for _, c := range []string{`{"a":1,"a":2}`, `{"x":{"a":"s","a":5}}`, `[{"p":1,"q":2,"p":3}]`} {
		if _, ok := parseTree([]byte(c)); ok {
			t.Errorf("parseTree(%s) took duplicate keys; the library's decoder must see them", c)
		}
	}
}

func TestParseTreeDepth(t *testing.T) {
	deep := strings.Repeat("[", maxTreeDepth) + strings.Repeat("]", maxTreeDepth)
	checkTree(t, []byte(deep))
	tooDeep := strings.Repeat("[", maxTreeDepth+1) + strings.Repeat("]", maxTreeDepth+1)
	if _, ok := parseTree([]byte(tooDeep)); ok {
		t.Fatal("parseTree took nesting deeper than encoding/json allows")
	}
	if _, err := libTree(t, []byte(tooDeep)); err == nil {
		t.Fatal("the library took nesting deeper than its limit; maxTreeDepth is out of date")
	}
}

func FuzzParseTree(f *testing.F) {
	for _, c := range treeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkTree(t, data) })
}

// hasDuplicateKey reports whether some object in data repeats a key (as
// encoding/json decodes keys).
func hasDuplicateKey(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dup := false
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				if seen[k.(string)] {
					dup = true
				}
				seen[k.(string)] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(); err != nil && !errors.Is(err, io.EOF) {
		return dup
	}
	return dup
}
