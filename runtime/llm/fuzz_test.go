package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/redact"
)

// decodeStream runs the SSE decoder and the tool-call assembler over a whole
// stream body, as the provider does, and returns the events and the error.
func decodeStream(body string, secret string) (*assembler, []StreamEvent, error) {
	var events []StreamEvent
	asm := newAssembler(func(ev StreamEvent) { events = append(events, ev) }, redact.New(secret))
	dec := newSSEDecoder(strings.NewReader(body))
	for {
		data, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return asm, events, err
		}
		if err := asm.addData(data); err != nil {
			return asm, events, err
		}
		if asm.done {
			break
		}
	}
	asm.flush()
	return asm, events, nil
}

func FuzzSSEStream(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"ls\",\"arguments\":\"{\\\"a\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"read\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"\\\":1}\"}}]}}]}\n\n"))
	f.Add([]byte(": comment\r\nevent: x\r\ndata: {\"choices\":[]}\r\n\r\n"))
	f.Add([]byte("data: {\"error\":{\"message\":\"boom\"}}\n\n"))
	f.Add([]byte("garbage\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		asm, events, err := decodeStream(string(body), "")
		if err != nil {
			var mf *malformedError
			var se *serverStreamError
			switch {
			case errors.As(err, &mf):
				if mf.what == "" {
					t.Fatalf("malformed error without what: %v", err)
				}
			case errors.As(err, &se):
			default:
				if !strings.Contains(err.Error(), "larger than") && !strings.Contains(err.Error(), "longer than") {
					t.Fatalf("unexpected error kind %T: %v", err, err)
				}
			}
			return
		}
		// What was streamed is what was assembled.
		msg := asm.message()
		var text strings.Builder
		args := map[int]string{}
		for _, ev := range events {
			switch ev.Type {
			case EventTextDelta:
				text.WriteString(ev.Delta)
			case EventToolCallDelta:
				args[ev.ToolCallIndex] += ev.Delta
			}
		}
		gotText := ""
		for _, b := range msg.Content {
			gotText += b.Text
		}
		if gotText != text.String() {
			t.Fatalf("assembled text %q != streamed %q", gotText, text.String())
		}
		ids := map[string]bool{}
		for i, c := range msg.ToolCalls {
			if c.ID == "" {
				t.Fatalf("call %d has no id", i)
			}
			ids[c.ID] = true
			if args[i] != string(c.Arguments) {
				t.Fatalf("call %d arguments %q != streamed %q", i, c.Arguments, args[i])
			}
		}
		_ = asm.stopReason()
	})
}

func FuzzParseScript(f *testing.F) {
	f.Add([]byte(`{"turns":[{"text":"hi"},{"toolCalls":[{"name":"read","arguments":{"path":"a"}}]}]}`))
	f.Add([]byte(`{"turns":[{"text":"x","toolCalls":[{"id":"q","name":"bash","arguments":"{\"command\":"}],"stopReason":"length","usage":{"input":1}}]}`))
	f.Add([]byte(`{"turns":[{"error":"boom"}]}`))
	f.Add([]byte(`{"turns":[{"toolCalls":[{}]}]}`))
	f.Add([]byte(` {"turns" : [ {"Text":"a"} , {"toolCalls":[{"name":"x","arguments": { "a" : [1, "b c"] } }]} ] } `))
	f.Add([]byte(`{"turns":[{"text":"a","text":"b"}],"turns":[]}`))
	f.Add([]byte(`{"turns":[{"toolCalls":null,"usage":{"input":1,"extra":2}}]}`))
	f.Add([]byte(`{"turns":[{"toolCalls":[{"name":"x","arguments":null}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseScript(data)
		// Parsing in place gives what the decoder gives, or leaves it to
		// the decoder.
		d, derr := decodeScript(data)
		if (err == nil) != (derr == nil) || (err != nil && err.Error() != derr.Error()) || !reflect.DeepEqual(s, d) {
			t.Fatalf("ParseScript = %+v, %v; the decoder = %+v, %v", s, err, d, derr)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "parse script: ") {
				t.Fatalf("error does not say what failed: %v", err)
			}
			return
		}
		// A parsed script plays every turn, then ends.
		p := NewScripted(s)
		for i, turn := range s.Turns {
			var streamed strings.Builder
			resp, err := p.Stream(context.Background(), Request{}, func(ev StreamEvent) {
				if ev.Type == EventTextDelta {
					streamed.WriteString(ev.Delta)
				}
			})
			if turn.Error != "" {
				if err == nil {
					t.Fatalf("turn %d: want its error", i)
				}
				continue
			}
			if err != nil {
				t.Fatalf("turn %d: %v", i, err)
			}
			if streamed.String() != turn.Text {
				t.Fatalf("turn %d streamed %q, want %q", i, streamed.String(), turn.Text)
			}
			if len(resp.Message.ToolCalls) != len(turn.ToolCalls) {
				t.Fatalf("turn %d: %d calls, want %d", i, len(resp.Message.ToolCalls), len(turn.ToolCalls))
			}
		}
		if _, err := p.Stream(context.Background(), Request{}, nil); !errors.Is(err, ErrScriptEnded) {
			t.Fatalf("after the last turn: %v", err)
		}
		// The script survives a round trip through its JSON form.
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseScript(b); err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
	})
}

func FuzzStreamRedactor(f *testing.F) {
	f.Add("the key sk-abcdefghij is here", uint8(3))
	f.Add("sk-sk-sk-abcdefghi", uint8(1))
	f.Fuzz(func(t *testing.T, s string, step uint8) {
		const secret = "sk-abcdefghij"
		r := newStreamRedactor(redact.New(secret))
		n := int(step%7) + 1
		var out strings.Builder
		for i := 0; i < len(s); i += n {
			out.WriteString(r.write(0, s[i:min(i+n, len(s))]))
		}
		out.WriteString(r.flush(0))
		if got, want := out.String(), RedactSecret(s, secret); got != want {
			t.Fatalf("streamed %q in steps of %d: got %q, want %q", s, n, got, want)
		}
	})
}
