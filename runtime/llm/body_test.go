package llm

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pi-go/pi/runtime/content"
)

// readBody reads a request body whole, and once more one byte at a time
// (the escaping of a string in steps gives the same bytes); it checks the
// size the body announced.
func readBody(t *testing.T, b *requestBody) []byte {
	t.Helper()
	whole, err := io.ReadAll(b.reader())
	if err != nil {
		t.Fatal(err)
	}
	bytewise, err := io.ReadAll(iotest.OneByteReader(b.reader()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(whole, bytewise) {
		t.Fatalf("read in one go and byte by byte differ:\n%s\n%s", whole, bytewise)
	}
	if int64(len(whole)) != b.size {
		t.Fatalf("body is %d bytes, announced %d", len(whole), b.size)
	}
	return whole
}

// TestRequestBodyIsGoOpenAIs: the body is valid JSON that go-openai's
// request type decodes, and encoding that value again with encoding/json
// gives the body back byte for byte: the body is what go-openai's structs
// would send. (TestOpenAIWireMapping checks what the messages say; the
// tools' schemas here have their keys sorted, as a decoded value encodes
// them.)
func TestRequestBodyIsGoOpenAIs(t *testing.T) {
	png := content.Image("iVBORw0KGgo=", "image/png")
	big := strings.Repeat("line \"quoted\"\t<tag> & ü € \u2028 \U0001F600\n", 2000) // past inlineMax
	bigArgs, _ := json.Marshal(map[string]string{"content": big})
	requests := map[string]Request{
		"mapping": {
			SystemPrompt: "You are pi.",
			Messages: []Message{
				{Role: RoleUser, Content: []content.Block{content.Text("look at a.png")}},
				{Role: RoleAssistant, Content: []content.Block{content.Text("Reading both.")}, ToolCalls: []ToolCall{
					{ID: "c1", Name: "read", Arguments: RawArguments(`{"path":"a.png"}`)}, {ID: "c2", Name: "read", Arguments: RawArguments(`{"path":"b.txt"}`)}}},
				{Role: RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []content.Block{png}},
				{Role: RoleToolResult, ToolCallID: "c2", ToolName: "read", Content: []content.Block{content.Text("line 1"), content.Text("line 2")}, IsError: true},
				{Role: RoleAssistant},
				{Role: RoleUser, Content: []content.Block{content.Text("and this"), png, content.Text("")}},
			},
			Tools: []ToolSpec{
				{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}`)},
			},
		},
		"large strings": {
			SystemPrompt: big,
			Messages: []Message{
				{Role: RoleUser, Content: []content.Block{content.Text(big), content.Text(big)}},
				{Role: RoleAssistant, Content: []content.Block{content.Text(big)}, ToolCalls: []ToolCall{{ID: "w", Name: "write", Arguments: bigArgs}}},
				{Role: RoleToolResult, ToolCallID: "w", Content: []content.Block{content.Text(big), png, png, content.Text(big)}},
				{Role: RoleUser, Content: []content.Block{png, content.Text(big)}},
			},
		},
		"empty parts": {
			Messages: []Message{
				{Role: RoleUser},
				{Role: RoleAssistant, Content: []content.Block{content.Text("")}, ToolCalls: []ToolCall{{}, {ID: "x"}, {Name: "y", Arguments: RawArguments(`<>&`)}}},
				{Role: RoleToolResult},
				{Role: RoleToolResult, Content: []content.Block{png}},
				{Role: RoleToolResult, Content: []content.Block{content.Text("")}},
			},
		},
	}
	for name, req := range requests {
		for _, images := range []bool{true, false} {
			for _, usage := range []bool{true, false} {
				b, err := wireRequest(req, "model \"<m>\"", images, usage)
				if err != nil {
					t.Fatal(err)
				}
				got := readBody(t, b)
				var decoded openai.ChatCompletionRequest
				if err := json.Unmarshal(got, &decoded); err != nil {
					t.Fatalf("%s: the body is not a go-openai request: %v\n%s", name, err, got)
				}
				want, err := json.Marshal(decoded)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s (images %v, usage %v):\n got %.2000s\nwant %.2000s", name, images, usage, got, want)
				}
			}
		}
	}
}

func TestRequestBodyErrors(t *testing.T) {
	_, err := wireRequest(Request{Tools: []ToolSpec{{Name: "t", Parameters: json.RawMessage(`{"type":`)}}}, "m", false, false)
	// encoding/json's own error, as when the whole request was one
	// json.Marshal.
	if err == nil || !strings.Contains(err.Error(), "json: error calling MarshalJSON for type") {
		t.Fatalf("err = %v", err)
	}
}

// FuzzAppendEscaped: appendEscaped writes exactly what json.Marshal writes
// for a string (and for bytes through MarshalText, as RawArguments), at
// once and in steps of any size.
func FuzzAppendEscaped(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\/\b\f\n\r\t\x00\x1f\x7f", "<a & b>", "\u2028\u2029", "ü€😀", "\xff\xfe", "\xe2\x82", "€"[:2] + "x", "\xf0\x9f\x98"} {
		f.Add(s, 1)
	}
	f.Fuzz(func(t *testing.T, s string, step int) {
		want, _ := json.Marshal(s)
		want = want[1 : len(want)-1]
		if got, next := appendEscaped(nil, s, 0, -1); string(got) != string(want) || next != len(s) {
			t.Fatalf("appendEscaped(%q) = %s, %d; want %s", s, got, next, want)
		}
		viaText, _ := json.Marshal(RawArguments(s))
		if string(viaText[1:len(viaText)-1]) != string(want) {
			t.Fatalf("RawArguments(%q) = %s; want %s", s, viaText, want)
		}
		step = 1 + abs(step)%16
		var got []byte
		for i := 0; i < len(s); {
			n := len(got)
			got, i = appendEscaped(got, []byte(s), i, len(got)+step)
			if len(got) == n {
				t.Fatalf("no progress at %d of %q", i, s)
			}
		}
		if string(got) != string(want) {
			t.Fatalf("in steps of %d: %s; want %s", step, got, want)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// FuzzAppendUnquoted: appendUnquoted decodes a JSON string literal exactly
// as encoding/json decodes it into a string, and takes what it takes.
func FuzzAppendUnquoted(f *testing.F) {
	for _, s := range []string{`""`, `"plain"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\u20ac"`, `"\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`,
		"\"\xff\xfe\"", "\"\xe2\x82\"", `"\x"`, `"a`, `"\u12"`, "\"\x01\"", `"ü€😀"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, q []byte) {
		var want string
		wantErr := json.Unmarshal(q, &want)
		isString := wantErr == nil && len(bytes.TrimSpace(q)) > 0 && bytes.TrimSpace(q)[0] == '"'
		if !isString {
			return // encoding/json never hands such a value on as a string
		}
		got, ok := appendUnquoted([]byte("x"), bytes.TrimSpace(q))
		if !ok || string(got) != "x"+want {
			t.Fatalf("appendUnquoted(%s) = %q, %v; want %q", q, got, ok, want)
		}
	})
}

// TestStreamChunkMirrorsGoOpenAI: streamChunk and its parts have the
// members of go-openai's chunk types, with their names, tags and types,
// except where a tool call's argument text is kept as argsText; so a chunk
// decodes into both alike or into neither.
func TestStreamChunkMirrorsGoOpenAI(t *testing.T) {
	replaced := map[reflect.Type]reflect.Type{
		reflect.TypeFor[streamChoice]():   reflect.TypeFor[openai.ChatCompletionStreamChoice](),
		reflect.TypeFor[streamDelta]():    reflect.TypeFor[openai.ChatCompletionStreamChoiceDelta](),
		reflect.TypeFor[streamToolCall](): reflect.TypeFor[openai.ToolCall](),
		reflect.TypeFor[streamFunction](): reflect.TypeFor[openai.FunctionCall](),
		reflect.TypeFor[argsText]():       reflect.TypeFor[string](),
	}
	var same func(ours, theirs reflect.Type) bool
	same = func(ours, theirs reflect.Type) bool {
		if r, ok := replaced[ours]; ok {
			if r != theirs {
				return false
			}
			if ours.Kind() != reflect.Struct {
				return true
			}
		} else if ours.Kind() != theirs.Kind() || ours.Kind() != reflect.Struct {
			if ours.Kind() == theirs.Kind() && (ours.Kind() == reflect.Slice || ours.Kind() == reflect.Pointer) {
				return same(ours.Elem(), theirs.Elem())
			}
			return ours == theirs
		}
		// streamDelta has go-openai's members, then the reasoning
		// members other servers use.
		extra := map[reflect.Type][]string{reflect.TypeFor[streamDelta](): {"Reasoning", "ReasoningText"}}[ours]
		if ours.NumField() != theirs.NumField()+len(extra) {
			return false
		}
		for i, name := range extra {
			if f := ours.Field(theirs.NumField() + i); f.Name != name || f.Type.Kind() != reflect.String {
				t.Errorf("%s: member %d is %s %s, want %s string", ours, theirs.NumField()+i, f.Name, f.Type, name)
				return false
			}
		}
		for i := range theirs.NumField() {
			o, th := ours.Field(i), theirs.Field(i)
			if o.Name != th.Name || o.Tag != th.Tag || o.Anonymous || th.Anonymous || !same(o.Type, th.Type) {
				t.Errorf("%s.%s %s `%s` vs %s.%s %s `%s`", ours, o.Name, o.Type, o.Tag, theirs, th.Name, th.Type, th.Tag)
				return false
			}
		}
		return true
	}
	// streamChunk is wireChunk flattened: go-openai's chunk, then Error.
	chunk := reflect.TypeFor[streamChunk]()
	theirs := reflect.TypeFor[openai.ChatCompletionStreamResponse]()
	if chunk.NumField() != theirs.NumField()+1 {
		t.Fatalf("streamChunk has %d members, go-openai's chunk %d (+ Error)", chunk.NumField(), theirs.NumField())
	}
	for i := range theirs.NumField() {
		o, th := chunk.Field(i), theirs.Field(i)
		if o.Name != th.Name || o.Tag != th.Tag || !same(o.Type, th.Type) {
			t.Errorf("streamChunk.%s %s `%s` vs %s %s `%s`", o.Name, o.Type, o.Tag, th.Name, th.Type, th.Tag)
		}
	}
	wireErr, _ := reflect.TypeFor[wireChunk]().FieldByName("Error")
	if last := chunk.Field(chunk.NumField() - 1); last.Name != "Error" || last.Tag != wireErr.Tag || last.Type != wireErr.Type {
		t.Errorf("streamChunk's last member is %s, want wireChunk's Error", last.Name)
	}
}

// TestChunkErrorsAreGoOpenAIs: a chunk go-openai's types do not take is an
// error with encoding/json's text about them.
func TestChunkErrorsAreGoOpenAIs(t *testing.T) {
	for _, chunk := range []string{
		`{"choices":{}}`,
		`{"created":"now","choices":[]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":{"a":1}}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":5}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":"0"}]}}]}`,
	} {
		var c wireChunk
		want := json.Unmarshal([]byte(chunk), &c)
		if want == nil {
			t.Fatalf("go-openai's types take %s", chunk)
		}
		err := newAssembler(nil, nil).addData([]byte(chunk))
		if err == nil || err.Error() != "chunk is not a chat completion chunk ("+want.Error()+"): received "+strconv.Quote(chunk) {
			t.Errorf("addData(%s) = %v; want encoding/json's %v", chunk, err, want)
		}
	}
	// null arguments are no arguments, as for a string.
	asm := newAssembler(nil, nil)
	for _, chunk := range []string{
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"ls","arguments":"{}"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":null}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"","arguments":null}}]}}]}`,
	} {
		if err := asm.addData([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if got := asm.message().ToolCalls; len(got) != 1 || string(got[0].Arguments) != "{}" {
		t.Fatalf("calls = %+v", got)
	}
}
