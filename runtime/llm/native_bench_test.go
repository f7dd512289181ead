package llm

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/anthropic"
	"github.com/pi-go/pi/internal/testkit/gemini"
	"github.com/pi-go/pi/internal/testkit/responses"
	"github.com/pi-go/pi/internal/testkit/ssekit"
)

// nativeStreams are the same turn (thinking in 200 pieces, text in 400, a
// call's arguments in 100) in each native API's events.
func nativeStreams() map[string][]ssekit.Event {
	thinking := strings.Repeat("hmm ", 200)
	text := strings.Repeat("word ", 400)
	args := `{"command":"` + strings.Repeat("echo hi; ", 100) + `"}`
	ant := anthropic.Events(anthropic.Reply{Chunks: 200, Blocks: []anthropic.Block{
		{Type: "thinking", Text: thinking, Signature: "sig"}}})
	ant = ant[:len(ant)-2] // without message_delta and message_stop
	more := anthropic.Events(anthropic.Reply{Chunks: 400, Blocks: []anthropic.Block{{Type: "text", Text: text}}})
	ant = append(ant, more[1:]...)
	res := responses.Events(responses.Reply{Chunks: 200, Items: []responses.Item{
		{Type: "reasoning", Summary: []string{thinking}, EncryptedContent: "enc"},
		{Type: "message", Text: text + text},
		{Type: "function_call", CallID: "c", Name: "bash", Arguments: args + strings.Repeat(" ", 0)},
	}})
	gem := gemini.Events(gemini.Reply{Chunks: 200, Parts: []gemini.Part{
		{Text: thinking, Thought: true, Signature: "sig"}, {Text: text + text},
		{Call: &gemini.Call{Name: "bash", Args: args}},
	}})
	return map[string][]ssekit.Event{APIAnthropicMessages: ant, APIOpenAIResponses: res, APIGoogleGenerative: gem}
}

// BenchmarkNativeDecode measures, per event, what pi adds over reading
// the raw stream: "raw" only splits the SSE stream into events (the least
// any client does), "pi" also decodes each event and assembles the turn
// with its events and the key redactor on.
func BenchmarkNativeDecode(b *testing.B) {
	for api, events := range nativeStreams() {
		var body strings.Builder
		for _, ev := range events {
			body.WriteString(ssekit.Format(ev))
		}
		stream := body.String()
		p, err := NewProvider(ProviderConfig{API: api, Model: "m", APIKey: testKey})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(api+"/raw", func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				dec := newSSEDecoder(strings.NewReader(stream))
				for {
					if _, err := dec.Next(); errors.Is(err, io.EOF) {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
		})
		b.Run(api+"/pi", func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				var t *turn
				var err error
				switch p := p.(type) {
				case *Anthropic:
					t = newTurn(func(StreamEvent) {}, p.transport)
					err = p.read(strings.NewReader(stream), t)
				case *Responses:
					t = newTurn(func(StreamEvent) {}, p.transport)
					err = p.read(strings.NewReader(stream), t)
				case *Gemini:
					t = newTurn(func(StreamEvent) {}, p.transport)
					err = p.read(strings.NewReader(stream), t)
				}
				if err != nil {
					b.Fatal(err)
				}
				if len(t.response("").Message.Content) == 0 {
					b.Fatal("nothing assembled")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
		})
	}
}

// BenchmarkNativeFirstEvent measures the time from a turn's first byte
// of answer to its first event over loopback (µs-after-first-byte), and
// from sending to the first event (µs-to-first-event, which includes the
// test server's own time): "raw" posts the same body with net/http and
// reads up to the first data line of a delta, "pi" is Stream up to its
// first event (decoding, assembly, redaction on).
func BenchmarkNativeFirstEvent(b *testing.B) {
	for api, events := range nativeStreams() {
		srv := ssekit.New(b, "bench", func(string) bool { return true })
		url := srv.URL
		switch api {
		case APIOpenAIResponses:
			url += "/v1"
		case APIGoogleGenerative:
			url += "/v1beta"
		}
		p, err := NewProvider(ProviderConfig{API: api, BaseURL: url, Model: "m", APIKey: testKey})
		if err != nil {
			b.Fatal(err)
		}
		req := userRequest("hi")
		var firstByte time.Time
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotFirstResponseByte: func() { firstByte = time.Now() },
		})
		report := func(b *testing.B, total, after time.Duration) {
			b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-to-first-event")
			b.ReportMetric(float64(after.Nanoseconds())/1e3/float64(b.N), "µs-after-first-byte")
		}
		b.Run(api+"/raw", func(b *testing.B) {
			var total, after time.Duration
			for b.Loop() {
				srv.Add(ssekit.Reply{Events: events})
				start := time.Now()
				hreq, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/raw", strings.NewReader(`{"model":"m"}`))
				res, err := http.DefaultClient.Do(hreq)
				if err != nil {
					b.Fatal(err)
				}
				br := bufio.NewReader(res.Body)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						b.Fatal(err)
					}
					if strings.HasPrefix(line, "data:") && (strings.Contains(line, "delta") || api == APIGoogleGenerative) {
						break
					}
				}
				now := time.Now()
				total += now.Sub(start)
				after += now.Sub(firstByte)
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			report(b, total, after)
		})
		b.Run(api+"/pi", func(b *testing.B) {
			var total, after time.Duration
			for b.Loop() {
				srv.Add(ssekit.Reply{Events: events})
				start := time.Now()
				var first time.Time
				_, err := p.Stream(ctx, req, func(StreamEvent) {
					if first.IsZero() {
						first = time.Now()
					}
				})
				if err != nil {
					b.Fatal(err)
				}
				total += first.Sub(start)
				after += first.Sub(firstByte)
			}
			report(b, total, after)
		})
	}
}
