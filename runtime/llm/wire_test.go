package llm

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// sse joins data payloads into an SSE body.
func sse(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	return b.String()
}

func TestAssembleStreams(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantText  string
		wantCalls []ToolCall
		wantStop  StopReason
	}{
		{
			name: "calls without index or id",
			body: sse(
				`{"choices":[{"delta":{"tool_calls":[{"function":{"name":"ls","arguments":"{\"pa"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"th\":\".\"}"}}]}}]}`,
				`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, `[DONE]`),
			wantCalls: []ToolCall{{ID: "call_1", Name: "ls", Arguments: RawArguments(`{"path":"."}`)}},
			wantStop:  StopToolUse,
		},
		{
			name: "calls without index, new id starts a new call",
			body: sse(
				`{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"ls","arguments":"{}"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"read","arguments":"{\"path\""}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":":\"x\"}"}}]}}]}`,
				`{"choices":[{"delta":{},"finish_reason":"stop"}]}`),
			wantCalls: []ToolCall{{ID: "a", Name: "ls", Arguments: RawArguments(`{}`)}, {ID: "b", Name: "read", Arguments: RawArguments(`{"path":"x"}`)}},
			wantStop:  StopToolUse, // "stop" with calls is still tool use
		},
		{
			name: "index order kept when indexes start at 1",
			body: sse(
				`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"x","function":{"name":"a","arguments":"{}"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":2,"id":"y","function":{"name":"b","arguments":"{}"}}]}}]}`,
				`[DONE]`),
			wantCalls: []ToolCall{{ID: "x", Name: "a", Arguments: RawArguments(`{}`)}, {ID: "y", Name: "b", Arguments: RawArguments(`{}`)}},
			wantStop:  StopToolUse,
		},
		{
			name:     "content filter",
			body:     sse(`{"choices":[{"delta":{"content":"no"},"finish_reason":"content_filter"}]}`),
			wantText: "no",
			wantStop: StopError,
		},
		{
			name:     "multi-line data, CRLF, comments, other fields",
			body:     ": ping\r\nevent: chunk\r\nid: 7\r\nretry: 100\r\ndata: {\"choices\":[{\"delta\":\r\ndata: {\"content\":\"hi\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n",
			wantText: "hi",
			wantStop: StopEnd,
		},
		{
			name:     "final event without blank line",
			body:     "data: {\"choices\":[{\"delta\":{\"content\":\"end\"},\"finish_reason\":\"stop\"}]}",
			wantText: "end",
			wantStop: StopEnd,
		},
		{
			name:     "choices other than 0 ignored",
			body:     sse(`{"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}}]}`, `[DONE]`),
			wantText: "mine",
			wantStop: StopEnd,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asm, _, err := decodeStream(tt.body, "")
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			msg := asm.message()
			text := ""
			for _, b := range msg.Content {
				text += b.Text
			}
			if text != tt.wantText {
				t.Fatalf("text = %q, want %q", text, tt.wantText)
			}
			if len(msg.ToolCalls) != len(tt.wantCalls) {
				t.Fatalf("calls = %+v, want %+v", msg.ToolCalls, tt.wantCalls)
			}
			for i := range tt.wantCalls {
				if !reflect.DeepEqual(msg.ToolCalls[i], tt.wantCalls[i]) {
					t.Fatalf("call %d = %+v, want %+v", i, msg.ToolCalls[i], tt.wantCalls[i])
				}
			}
			if got := asm.stopReason(); got != tt.wantStop {
				t.Fatalf("stop = %q, want %q", got, tt.wantStop)
			}
		})
	}
}

func TestSSEDecoderErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"not a field", "data: {}\n\nhello world\n", `line 3 is not a server-sent event (want "data: {...}"): received "hello world"`},
		{"bad chunk", sse(`{"choices":[}`), `chunk is not a chat completion chunk`},
		{"choices not an array", sse(`{"choices":{}}`), `chunk is not a chat completion chunk`},
		{"error string", sse(`{"error":"overloaded"}`), `the server sent an error: overloaded`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decodeStream(tt.body, "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	long := "data: " + strings.Repeat("x", maxEventBytes+1) + "\n\n"
	if _, _, err := decodeStream(long, ""); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("oversized line: err = %v", err)
	}
	var mf *malformedError
	if _, _, err := decodeStream("nope\n", ""); !errors.As(err, &mf) {
		t.Fatalf("err = %v, want a malformedError", err)
	}
}

func TestAssembleCompletion(t *testing.T) {
	tests := []struct {
		name, body, wantText string
		wantCalls            int
		wantStop             StopReason
	}{
		{"content string", `{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`, "hi", 0, StopEnd},
		{"content parts", `{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"stop"}]}`, "ab", 0, StopEnd},
		{"null content with calls", `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"ls","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`, "", 1, StopToolUse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asm := newAssembler(nil, nil)
			if err := asm.addCompletion([]byte(tt.body)); err != nil {
				t.Fatal(err)
			}
			msg := asm.message()
			text := ""
			for _, b := range msg.Content {
				text += b.Text
			}
			if text != tt.wantText || len(msg.ToolCalls) != tt.wantCalls || asm.stopReason() != tt.wantStop {
				t.Fatalf("got text %q, %d calls, stop %q", text, len(msg.ToolCalls), asm.stopReason())
			}
		})
	}
	for _, bad := range []string{`{"choices":[]}`, `{"error":{"message":"nope"}}`, `[]`} {
		if err := newAssembler(nil, nil).addCompletion([]byte(bad)); err == nil {
			t.Fatalf("addCompletion(%s) succeeded", bad)
		}
	}
}
