package llm

import (
	"bytes"
	"encoding/json"
	"io"
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
