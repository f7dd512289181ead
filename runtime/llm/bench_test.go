package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"

	"github.com/pi-go/pi/runtime/redact"
)

// benchReply is a turn of 400 text pieces and two interleaved tool calls
// whose arguments come in 100 pieces each.
func benchReply() openai.Reply {
	return openai.Reply{
		Text:       strings.Repeat("word ", 400),
		Chunks:     400,
		Interleave: true,
		ToolCalls: []openai.ToolCall{
			{ID: "a", Name: "write", Arguments: `{"path":"x.go","content":"` + strings.Repeat("line\\n", 100) + `"}`},
			{ID: "b", Name: "bash", Arguments: `{"command":"` + strings.Repeat("echo hi; ", 100) + `"}`},
		},
		Usage: &openai.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2},
	}
}

// largeArgsReply is one write call with 200 KB of arguments in 4000
// pieces, as a model writing a big file streams it.
func largeArgsReply() openai.Reply {
	return openai.Reply{
		Chunks:    4000,
		ToolCalls: []openai.ToolCall{{ID: "w", Name: "write", Arguments: `{"path":"big.txt","content":"` + strings.Repeat("0123456789abcdef\\n", 12000) + `"}`}},
	}
}

// BenchmarkSSEDecode measures the decoder and assembler alone on an
// in-memory stream (no network), with the key redactor on.
func BenchmarkSSEDecode(b *testing.B) {
	for _, bc := range []struct {
		name  string
		reply openai.Reply
		calls int
	}{{"mixed", benchReply(), 2}, {"large-arguments", largeArgsReply(), 1}} {
		b.Run(bc.name, func(b *testing.B) {
			var body strings.Builder
			events := openai.Chunks(bc.reply)
			for _, ev := range events {
				body.WriteString("data: " + ev + "\n\n")
			}
			stream := body.String()
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				asm := newAssembler(func(StreamEvent) {}, redact.New(testKey))
				dec := newSSEDecoder(strings.NewReader(stream))
				for {
					data, err := dec.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					if err := asm.addData(data); err != nil {
						b.Fatal(err)
					}
				}
				asm.flush()
				if len(asm.message().ToolCalls) != bc.calls {
					b.Fatal("calls not assembled")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/chunk")
		})
	}
}

// BenchmarkOpenAIStream measures one whole turn against a loopback test
// server: request encoding, HTTP, SSE decoding, assembly, events.
func BenchmarkOpenAIStream(b *testing.B) {
	reply := benchReply()
	srv := openai.NewServer(b)
	p, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, Model: "m", APIKey: testKey})
	if err != nil {
		b.Fatal(err)
	}
	req := userRequest("hi")
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		srv.Add(reply)
		b.StartTimer()
		resp, err := p.Stream(context.Background(), req, func(StreamEvent) {})
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Message.ToolCalls) != 2 {
			b.Fatal("calls not assembled")
		}
	}
}

// BenchmarkAppendEscaped escapes 32 KB of source code (tabs, quotes,
// ASCII), what a read tool result is: each string of the history is
// escaped once, so this is the per-turn cost of a new result.
func BenchmarkAppendEscaped(b *testing.B) {
	var src strings.Builder
	for i := 0; src.Len() < 32<<10; i++ {
		fmt.Fprintf(&src, "%05d\tfunc f%d() { return \"quoted\" } // a line of code\n", i, i)
	}
	s := src.String()
	dst := make([]byte, 0, 2*len(s))
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		dst, _ = appendEscaped(dst[:0], s, 0, -1)
	}
}
