package openai

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readEvents returns the data payloads of an SSE body.
func readEvents(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, data)
		}
	}
	return out
}

func TestServerStreamsAndRecords(t *testing.T) {
	s := NewServer(t, Reply{
		Text: "hello world", Chunks: 3, Interleave: true, Usage: &Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3},
		ToolCalls: []ToolCall{{Name: "read", Arguments: `{"path":"a"}`}, {ID: "x", Name: "ls", Arguments: `{"p":1}`}},
	})
	if !strings.HasSuffix(s.URL, "/v1") {
		t.Fatalf("URL %q does not end in /v1", s.URL)
	}
	resp := post(t, s.URL, `{"model":"m","stream":true}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	events := readEvents(t, resp.Body)
	if events[len(events)-1] != "[DONE]" {
		t.Fatalf("last event %q, want [DONE]", events[len(events)-1])
	}
	var text string
	args := map[int]string{}
	ids := map[int]string{}
	var order []int
	var finish string
	var usage map[string]any
	for _, ev := range events[:len(events)-1] {
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal([]byte(ev), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", ev, err)
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
		for _, c := range chunk.Choices {
			text += c.Delta.Content
			for _, tc := range c.Delta.ToolCalls {
				args[tc.Index] += tc.Function.Arguments
				if tc.ID != "" {
					ids[tc.Index] = tc.ID
				}
				order = append(order, tc.Index)
			}
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if text != "hello world" || args[0] != `{"path":"a"}` || args[1] != `{"p":1}` || ids[0] != "call_1" || ids[1] != "x" {
		t.Fatalf("assembled text=%q args=%v ids=%v", text, args, ids)
	}
	interleaved := false
	for i := 2; i < len(order); i++ {
		if order[i] != order[i-1] {
			interleaved = true
		}
	}
	if !interleaved || finish != "tool_calls" || usage["total_tokens"] != float64(3) {
		t.Fatalf("order=%v finish=%q usage=%v", order, finish, usage)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0]["model"] != "m" {
		t.Fatalf("Requests() = %v", reqs)
	}
}

func TestServerOtherReplies(t *testing.T) {
	s := NewServer(t,
		Reply{NotStreamed: true, Text: "plain"},
		Reply{Status: 429, Header: http.Header{"Retry-After": {"2"}}, ErrorMessage: "slow down"},
		Reply{Body: "data: {not json\n\n"},
	)
	resp := post(t, s.URL, `{"stream":true}`)
	var c map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("not streamed: %v %v", c, err)
	}
	if c["object"] != "chat.completion" {
		t.Fatalf("object = %v", c["object"])
	}
	resp = post(t, s.URL, `{"stream":true}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || !strings.Contains(string(b), "slow down") {
		t.Fatalf("429 reply: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	resp = post(t, s.URL, `{"stream":true}`)
	b, _ = io.ReadAll(resp.Body)
	if string(b) != "data: {not json\n\n" {
		t.Fatalf("raw body = %q", b)
	}
}
