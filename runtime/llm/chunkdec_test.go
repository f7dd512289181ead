package llm

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
)

// chunkSeeds are chunks as servers send them, and near misses.
func chunkSeeds() []string {
	seeds := openai.Chunks(benchReply())
	seeds = append(seeds, openai.Chunks(openai.Reply{Reasoning: "think", ReasoningField: "reasoning", Text: "x", Chunks: 2})...)
	return append(seeds,
		`{"id":"c","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"caf\u00e9 \"q\" \ud83d\ude00 \ud800"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"abc"}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\u00e9\"}"}}]},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":null}},{"index":null,"id":null}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
		`{"choices":[],"extra":[1,-2.5e3,true,false,null,{"a":[{}]}," "]}`,
		`{"choices":null,"id":null,"created":null}`,
		`{"Choices":[]}`, `{"ID":"x"}`, `{"id":"a","id":"b"}`, `{"created":1.5}`, `{"created":01}`, `{"created":-0}`,
		`{"choices":[null]}`, `{"choices":[{"delta":null}]}`, `{"error":{"message":"boom"}}`, `{"error":null}`,
		`{"choices":[{"index":0,"delta":{"content":"a\x01"}}]}`, `{"choices":[{"delta":{"content":"\'"}}]}`,
		`{"choices":[{"delta":{"role":"assistant","refusal":"no","reasoning_content":"r","reasoning_text":"t"}}]}`,
		"{\"id\":\"\xff\"}", `{"a\u0062":1}`, `{"x":1} `, `{"x":1}x`, ` {"x":1}`, `null`, `{}`, `{`, `{"x":}`, `{"x":[1,]}`,
		`{"choices":[{"content_filter_results":{}}]}`, `{"choices":[{"delta":{"function_call":null}}]}`,
	)
}

// FuzzChunkDecoder: the hand decoder decodes a chunk into exactly what
// encoding/json decodes it into, or declines it; it never takes what
// encoding/json does not.
func FuzzChunkDecoder(f *testing.F) {
	for _, s := range chunkSeeds() {
		f.Add([]byte(s))
	}
	var d chunkDecoder
	f.Fuzz(func(t *testing.T, data []byte) {
		var got streamChunk
		if !d.decode(data, &got) {
			return
		}
		var want streamChunk
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("decoded %q, which encoding/json rejects: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decode(%q)\n got %+v\nwant %+v", data, got, want)
		}
	})
}

// TestChunkDecoderTakesServersChunks: the chunks servers send every
// turn are decoded by the hand decoder, not left to encoding/json (the
// fuzz test only says that what it takes is right).
func TestChunkDecoderTakesServersChunks(t *testing.T) {
	var d chunkDecoder
	for _, s := range chunkSeeds()[:len(openai.Chunks(benchReply()))+2] {
		if s == "[DONE]" || strings.Contains(s, `"usage":{`) {
			continue // not a chunk; a usage is encoding/json's
		}
		var c streamChunk
		if !d.decode([]byte(s), &c) {
			t.Errorf("declined %s", s)
		}
	}
	for _, s := range []string{
		`{"id":"c","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"caf\u00e9"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"abc"}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":null}},{"index":null,"id":null}]}}]}`,
	} {
		var c streamChunk
		if !d.decode([]byte(s), &c) {
			t.Errorf("declined %s", s)
		}
	}
}
