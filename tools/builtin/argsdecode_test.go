package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pi-go/pi/runtime/tool"
)

// checkFromTree is the property of fromTree for one argument type: when it
// succeeds, encoding/json (what decodeArgs runs) decodes the same bytes
// without an error into the same value.
func checkFromTree[A any](t testing.TB, raw string, strict bool) {
	t.Helper()
	tree, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(raw)))
	if err != nil {
		return
	}
	var got A
	if !fromTree(tree, &got, strict) {
		return
	}
	var want A
	if err := decodeArgs(json.RawMessage(raw), &want, strict); err != nil {
		t.Fatalf("%T from %s: fromTree took what encoding/json refuses (%v)", got, raw, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%T from %s: fromTree %+v, encoding/json %+v", got, raw, got, want)
	}
}

func checkAllArgs(t testing.TB, raw string) {
	t.Helper()
	for _, strict := range []bool{false, true} {
		checkFromTree[writeArgs](t, raw, strict)
		checkFromTree[editArgs](t, raw, strict)
		checkFromTree[readArgs](t, raw, strict)
		checkFromTree[bashArgs](t, raw, strict)
		checkFromTree[grepArgs](t, raw, strict)
		checkFromTree[findArgs](t, raw, strict)
		checkFromTree[lsArgs](t, raw, strict)
	}
}

var fromTreeCases = []string{
	`{"path":"a","content":"b"}`, `{"path":"a","content":null}`, `{"path":null}`, `{"Path":"a"}`, `{"PATH":"a","path":"b"}`,
	`{"path":"a","extra":1}`, `{"pat\u017fh":"a"}`, `{"\u212aey":1}`, `{"path":1}`, `{"path":["a"]}`,
	`{"path":"a","edits":[{"oldText":"x","newText":"y"},{"oldText":"","newText":"z"}]}`, `{"edits":[]}`, `{"edits":null}`,
	`{"edits":[{"oldText":"x","newtext":"y"}]}`, `{"edits":[{"oldText":"x","bogus":"y"}]}`, `{"edits":[1]}`, `{"edits":{}}`,
	`{"offset":1,"limit":2.5}`, `{"offset":-0,"limit":1e308}`, `{"offset":1e309}`, `{"limit":"3"}`, `{"offset":null}`,
	`{"command":"ls","timeout":0.5}`, `{"command":true}`, `{"ignoreCase":true,"literal":false,"context":2}`,
	`{"ignoreCase":"true"}`, `{"glob":"*.go","path":"."}`, `{}`, `[]`, `null`, `"x"`, `1`,
}

func TestFromTreeMatchesEncodingJSON(t *testing.T) {
	for _, c := range fromTreeCases {
		checkAllArgs(t, c)
	}
}

func FuzzFromTree(f *testing.F) {
	for _, c := range fromTreeCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, raw string) { checkAllArgs(t, raw) })
}

// TestFromTreeRefusesFoldedKeys: a key that names a field only
// case-insensitively is left to encoding/json (which fills the field), and
// so is an unknown key when strict (which encoding/json refuses).
func TestFromTreeRefusesFoldedKeys(t *testing.T) {
	for _, raw := range []string{`{"Path":"a"}`, `{"CONTENT":"a"}`, `{"conten\u017f":"a"}`} {
		tree, _ := jsonschema.UnmarshalJSON(strings.NewReader(raw))
		var a writeArgs
		if fromTree(tree, &a, false) {
			t.Errorf("fromTree took %s", raw)
		}
	}
	tree, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"path":"a","bogus":1}`))
	var e editArgs
	if fromTree(tree, &e, true) {
		t.Error("fromTree took an unknown field in strict mode")
	}
}

// TestWriteAllocatesOnce: a large write through the whole pipeline
// (validation, execute) allocates about one copy of its content — the
// parse — not one per decode. Before the one-decode path it was over ten.
func TestWriteAllocatesOnce(t *testing.T) {
	dir := t.TempDir()
	tools := fileTools(t, dir)
	const size = 8 << 20
	content := strings.Repeat("0123456789abcdef\n", size/17)
	args, _ := json.Marshal(map[string]string{"path": "big.txt", "content": content})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := tool.Run(context.Background(), tools, nil, "write", "c", args, nil)
	runtime.ReadMemStats(&after)
	if r.IsError {
		t.Fatal(r.Text())
	}
	got, err := os.ReadFile(filepath.Join(dir, "big.txt"))
	if err != nil || string(got) != content {
		t.Fatalf("file differs from the content (%v)", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 2*uint64(len(content)) {
		t.Fatalf("write of %d bytes allocated %d bytes (%.1f× the content); want under 2×", len(content), n, float64(n)/float64(len(content)))
	}
}
