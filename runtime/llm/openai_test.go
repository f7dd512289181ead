package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/content"
)

const testKey = "sk-test-0123456789abcdefSECRET"

// newTestProvider returns a provider for srv with short backoff delays.
func newTestProvider(t *testing.T, baseURL string, mod func(*OpenAIConfig)) *OpenAI {
	t.Helper()
	cfg := OpenAIConfig{BaseURL: baseURL, Model: "test-model", APIKey: testKey, APIKeyEnv: "OPENAI_API_KEY"}
	if mod != nil {
		mod(&cfg)
	}
	p, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	p.baseDelay = time.Millisecond
	p.maxDelay = 10 * time.Millisecond
	return p
}

// recorder collects stream events.
type recorder struct {
	mu     sync.Mutex
	events []StreamEvent
}

func (r *recorder) on(ev StreamEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, ev := range r.events {
		if ev.Type == EventTextDelta {
			b.WriteString(ev.Delta)
		}
	}
	return b.String()
}

// thinkingFirst reports whether every thinking delta came before the
// first text delta (a thinking block's tail the redactor held back goes
// out before the text that follows it).
func (r *recorder) thinkingFirst() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	text := false
	for _, ev := range r.events {
		switch ev.Type {
		case EventTextDelta:
			text = true
		case EventThinkingDelta:
			if text {
				return false
			}
		}
	}
	return true
}

// args returns the streamed argument text per call index, and the start
// events.
func (r *recorder) calls() (map[int]string, []StreamEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	args := map[int]string{}
	var starts []StreamEvent
	for _, ev := range r.events {
		switch ev.Type {
		case EventToolCallStart:
			starts = append(starts, ev)
		case EventToolCallDelta:
			args[ev.ToolCallIndex] += ev.Delta
		}
	}
	return args, starts
}

func (r *recorder) count(typ StreamEventType) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ev := range r.events {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

func userRequest(text string) Request {
	return Request{Messages: []Message{{Role: RoleUser, Content: []content.Block{content.Text(text)}}}}
}

func TestOpenAIStreamsReplies(t *testing.T) {
	tests := []struct {
		name       string
		reply      openai.Reply
		wantText   string
		wantCalls  []ToolCall
		wantStop   StopReason
		wantUsage  Usage
		minDeltas  int // text deltas at least
		wantEvents bool
	}{
		{
			name:      "text in chunks with usage",
			reply:     openai.Reply{Text: "Hello there, how can I help?", Chunks: 5, Usage: &openai.Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}},
			wantText:  "Hello there, how can I help?",
			wantStop:  StopEnd,
			wantUsage: Usage{InputTokens: 12, OutputTokens: 7, TotalTokens: 19},
			minDeltas: 5,
		},
		{
			name: "tool call arguments split across chunks",
			reply: openai.Reply{Text: "Reading.", Chunks: 4, ToolCalls: []openai.ToolCall{
				{ID: "call_abc", Name: "read", Arguments: `{"path":"src/main.go","offset":10}`}}},
			wantText:  "Reading.",
			wantCalls: []ToolCall{{ID: "call_abc", Name: "read", Arguments: RawArguments(`{"path":"src/main.go","offset":10}`)}},
			wantStop:  StopToolUse,
		},
		{
			name: "two tool calls interleaved by index",
			reply: openai.Reply{Chunks: 3, Interleave: true, ToolCalls: []openai.ToolCall{
				{ID: "c1", Name: "read", Arguments: `{"path":"a.txt"}`},
				{ID: "c2", Name: "bash", Arguments: `{"command":"ls -la /tmp"}`}}},
			wantCalls: []ToolCall{{ID: "c1", Name: "read", Arguments: RawArguments(`{"path":"a.txt"}`)}, {ID: "c2", Name: "bash", Arguments: RawArguments(`{"command":"ls -la /tmp"}`)}},
			wantStop:  StopToolUse,
		},
		{
			name: "non-streamed JSON reply",
			reply: openai.Reply{NotStreamed: true, Text: "plain answer", ToolCalls: []openai.ToolCall{{ID: "x", Name: "ls", Arguments: `{}`}},
				Usage: &openai.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}},
			wantText:  "plain answer",
			wantCalls: []ToolCall{{ID: "x", Name: "ls", Arguments: RawArguments(`{}`)}},
			wantStop:  StopToolUse,
			wantUsage: Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7},
		},
		{
			name: "plain JSON labelled as a stream",
			reply: openai.Reply{ContentType: "text/event-stream",
				Body: "\n" + asJSON(t, openai.Completion(openai.Reply{Text: "mislabelled"}))},
			wantText: "mislabelled",
			wantStop: StopEnd,
		},
		{
			name:     "length",
			reply:    openai.Reply{Text: "cut sh", FinishReason: "length"},
			wantText: "cut sh",
			wantStop: StopLength,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openai.NewServer(t, tt.reply)
			p := newTestProvider(t, srv.URL, nil)
			var rec recorder
			resp, err := p.Stream(context.Background(), userRequest("hi"), rec.on)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			gotText := ""
			for _, b := range resp.Message.Content {
				gotText += b.Text
			}
			if gotText != tt.wantText || rec.text() != tt.wantText {
				t.Fatalf("text = %q, streamed %q, want %q", gotText, rec.text(), tt.wantText)
			}
			if resp.Message.Role != RoleAssistant {
				t.Fatalf("role = %q", resp.Message.Role)
			}
			if len(resp.Message.ToolCalls) != len(tt.wantCalls) {
				t.Fatalf("calls = %+v, want %+v", resp.Message.ToolCalls, tt.wantCalls)
			}
			args, starts := rec.calls()
			for i, want := range tt.wantCalls {
				if got := resp.Message.ToolCalls[i]; got.ID != want.ID || got.Name != want.Name || string(got.Arguments) != string(want.Arguments) {
					t.Fatalf("call %d = %+v, want %+v", i, resp.Message.ToolCalls[i], want)
				}
				if args[i] != string(want.Arguments) {
					t.Fatalf("streamed arguments of call %d = %q, want %q", i, args[i], want.Arguments)
				}
				if starts[i].ToolCallID != want.ID || starts[i].ToolName != want.Name || starts[i].ToolCallIndex != i {
					t.Fatalf("start event %d = %+v", i, starts[i])
				}
			}
			if resp.StopReason != tt.wantStop {
				t.Fatalf("stop = %q, want %q", resp.StopReason, tt.wantStop)
			}
			if resp.Usage != tt.wantUsage {
				t.Fatalf("usage = %+v, want %+v", resp.Usage, tt.wantUsage)
			}
			if n := rec.count(EventTextDelta); n < tt.minDeltas {
				t.Fatalf("%d text deltas, want at least %d", n, tt.minDeltas)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0]["model"] != "test-model" || reqs[0]["stream"] != true {
				t.Fatalf("requests = %v", reqs)
			}
			if so, _ := reqs[0]["stream_options"].(map[string]any); so["include_usage"] != true {
				t.Fatalf("stream_options = %v, want include_usage", reqs[0]["stream_options"])
			}
			if auth := srv.Headers()[0].Get("Authorization"); auth != "Bearer "+testKey {
				t.Fatalf("Authorization = %q", auth)
			}
		})
	}
}

func TestOpenAIRetries(t *testing.T) {
	ok := openai.Reply{Text: "done"}
	tests := []struct {
		name      string
		replies   []openai.Reply
		retries   int
		wantErr   error  // nil: success
		wantMsg   string // in the error
		wantCalls int    // requests the server got
		minWait   time.Duration
	}{
		{name: "429 with Retry-After then success", replies: []openai.Reply{
			{Status: 429, Header: http.Header{"Retry-After": {"1"}}, ErrorMessage: "Rate limit reached"}, ok},
			wantCalls: 2, minWait: time.Second},
		{name: "500 then success", replies: []openai.Reply{{Status: 500}, {Status: 502}, ok}, wantCalls: 3},
		{name: "reset before output then success", replies: []openai.Reply{{Drop: true}, ok}, wantCalls: 2},
		{name: "cut before output then success", replies: []openai.Reply{{Text: "lost", DropAfter: 1}, ok}, wantCalls: 2},
		{name: "cut after output is not retried", replies: []openai.Reply{{Text: "partial answer", Chunks: 3, DropAfter: 3}},
			wantErr: ErrConnection, wantMsg: "reading the answer from URL failed", wantCalls: 1},
		{name: "5xx retries exhausted", retries: 2, replies: []openai.Reply{{Status: 500}, {Status: 503}, {Status: 500, ErrorMessage: "upstream overloaded"}},
			wantErr: ErrServer, wantMsg: "server error from URL (500) after 3 attempts: try again later (server said: upstream overloaded)", wantCalls: 3},
		{name: "429 retries exhausted", retries: 1, replies: []openai.Reply{{Status: 429}, {Status: 429, ErrorMessage: "quota"}},
			wantErr: ErrRateLimited, wantMsg: "rate limited by URL (429) after 2 attempts", wantCalls: 2},
		{name: "no retries", retries: -1, replies: []openai.Reply{{Status: 500}}, wantErr: ErrServer, wantCalls: 1},
		{name: "Retry-After too long", replies: []openai.Reply{{Status: 429, Header: http.Header{"Retry-After": {"3600"}}}},
			wantErr: ErrRateLimited, wantMsg: "the server asks to wait 1h0m0s", wantCalls: 1},
		{name: "resets exhausted", retries: 1, replies: []openai.Reply{{Drop: true}, {Drop: true}},
			wantErr: ErrConnection, wantMsg: "connection to URL failed after 2 attempts", wantCalls: 2},
		{name: "400 is not retried", replies: []openai.Reply{{Status: 400, ErrorMessage: "messages: bad"}},
			wantErr: ErrBadRequest, wantMsg: "request rejected by URL (400) (server said: messages: bad)", wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openai.NewServer(t, tt.replies...)
			p := newTestProvider(t, srv.URL, func(c *OpenAIConfig) { c.MaxRetries = tt.retries })
			start := time.Now()
			resp, err := p.Stream(context.Background(), userRequest("hi"), nil)
			waited := time.Since(start)
			if got := len(srv.Requests()); got != tt.wantCalls {
				t.Fatalf("server got %d requests, want %d", got, tt.wantCalls)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Stream: %v", err)
				}
				if resp.Message.Content[0].Text != "done" {
					t.Fatalf("resp = %+v", resp)
				}
				if waited < tt.minWait {
					t.Fatalf("retried after %v, want Retry-After %v honoured", waited, tt.minWait)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			want := strings.ReplaceAll(tt.wantMsg, "URL", srv.URL)
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %q, want it to contain %q", err, want)
			}
		})
	}
}

func TestOpenAIRetryCancelledByContext(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Status: 429, Header: http.Header{"Retry-After": {"60"}}})
	p := newTestProvider(t, srv.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	resp, err := p.Stream(ctx, userRequest("hi"), nil)
	if err != nil || resp.StopReason != StopAborted {
		t.Fatalf("resp=%+v err=%v, want StopAborted without error", resp, err)
	}
}

func TestOpenAIErrorMessages(t *testing.T) {
	tests := []struct {
		name    string
		reply   openai.Reply
		mod     func(*OpenAIConfig)
		wantErr error
		want    string
	}{
		{"401 names the env var", openai.Reply{Status: 401, ErrorMessage: "Incorrect API key provided: " + testKey}, nil, ErrAuth,
			"the API key from OPENAI_API_KEY was rejected by URL (401): set a valid key in OPENAI_API_KEY or pass --api-key (server said: Incorrect API key provided: [REDACTED])"},
		{"403", openai.Reply{Status: 403}, func(c *OpenAIConfig) { c.APIKeyEnv = "GROQ_API_KEY" }, ErrAuth,
			"the API key from GROQ_API_KEY was rejected by URL (403): set a valid key in GROQ_API_KEY or pass --api-key"},
		{"401 with the key from a flag", openai.Reply{Status: 401}, func(c *OpenAIConfig) { c.APIKeyEnv = "--api-key" }, ErrAuth,
			"the API key from --api-key was rejected by URL (401): pass a valid key with --api-key"},
		{"401 without a key", openai.Reply{Status: 401}, func(c *OpenAIConfig) { c.APIKey = "" }, ErrAuth,
			"no API key was sent and URL answered 401: set OPENAI_API_KEY or pass --api-key"},
		{"404 names model and URL", openai.Reply{Status: 404, ErrorMessage: "The model `test-model` does not exist"}, nil, ErrNotFound,
			`model "test-model" not found at URL (404): check the model name and --base-url`},
		{"malformed chunk", openai.Reply{Body: "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {not json\n\n"}, nil, ErrMalformedStream,
			`malformed stream from URL: chunk is not a chat completion chunk (invalid character 'n' looking for beginning of object key string): received "{not json"`},
		{"not SSE", openai.Reply{Body: "<html>gateway</html>\n", ContentType: "text/html"}, nil, ErrMalformedStream,
			`malformed stream from URL: line 1 is not a server-sent event (want "data: {...}"): received "<html>gateway</html>"`},
		{"truncated", openai.Reply{Body: "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n"}, nil, ErrMalformedStream,
			"the stream ended before a finish_reason or [DONE]"},
		{"error in stream", openai.Reply{Body: "data: {\"error\":{\"message\":\"context length exceeded\"}}\n\n"}, nil, ErrServer,
			"URL sent an error in the stream: context length exceeded"},
		{"error object with 200", openai.Reply{Body: `{"error":{"message":"model overloaded"}}` + "\n"}, nil, ErrServer,
			"URL sent an error in the stream: model overloaded"},
		{"malformed echoes key", openai.Reply{Body: "data: {" + testKey + "\n\n"}, nil, ErrMalformedStream, `received "{[REDACTED]"`},
		{"JSON body not a completion", openai.Reply{Body: `[1,2]`, ContentType: "application/json"}, nil, ErrMalformedStream,
			"body is not a chat completion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openai.NewServer(t, tt.reply)
			var logs bytes.Buffer
			p := newTestProvider(t, srv.URL, func(c *OpenAIConfig) {
				c.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Trace})
				if tt.mod != nil {
					tt.mod(c)
				}
			})
			_, err := p.Stream(context.Background(), userRequest("hi"), nil)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			want := strings.ReplaceAll(tt.want, "URL", srv.URL)
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %q\nwant it to contain %q", err, want)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(logs.String(), testKey) {
				t.Fatalf("the key leaked: err=%q logs=%q", err, logs.String())
			}
		})
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	p := newTestProvider(t, url, nil)
	_, err = p.Stream(context.Background(), userRequest("hi"), nil)
	if !errors.Is(err, ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", err)
	}
	want := "cannot connect to " + url + ": connection refused: check --base-url"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %q, want it to contain %q", err, want)
	}
}

func TestOpenAICancelMidStream(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Text: "one two three four five six", Chunks: 6, StallAfter: 3})
	p := newTestProvider(t, srv.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rec recorder
	done := make(chan struct{})
	var resp *Response
	var err error
	go func() {
		defer close(done)
		resp, err = p.Stream(ctx, userRequest("hi"), func(ev StreamEvent) {
			rec.on(ev)
			if rec.count(EventTextDelta) == 1 {
				cancel()
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after cancel")
	}
	if err != nil || resp == nil || resp.StopReason != StopAborted {
		t.Fatalf("resp=%+v err=%v, want StopAborted without error", resp, err)
	}
	if got := resp.Message.Content[0].Text; got != rec.text() || got == "" {
		t.Fatalf("partial text %q, streamed %q", got, rec.text())
	}
}

func TestOpenAIKeyRedactedInEvents(t *testing.T) {
	// The server echoes the key split across chunks, in text and arguments.
	srv := openai.NewServer(t, openai.Reply{
		Text: "your key is " + testKey + " ok", Chunks: 9,
		ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: `{"command":"echo ` + testKey + `"}`}},
	})
	p := newTestProvider(t, srv.URL, nil)
	var rec recorder
	resp, err := p.Stream(context.Background(), userRequest("hi"), rec.on)
	if err != nil {
		t.Fatal(err)
	}
	args, _ := rec.calls()
	// The events are outputs: redacted.
	for _, s := range []string{rec.text(), args[0]} {
		if strings.Contains(s, testKey) || !strings.Contains(s, "[REDACTED]") {
			t.Fatalf("event not redacted: %q", s)
		}
	}
	// The message is what the model said: the conversation and the tools
	// get it unchanged.
	if got := resp.Message.Content[0].Text; got != "your key is "+testKey+" ok" {
		t.Fatalf("assistant text rewritten: %q", got)
	}
	if got := string(resp.Message.ToolCalls[0].Arguments); got != `{"command":"echo `+testKey+`"}` {
		t.Fatalf("tool call arguments rewritten: %q", got)
	}
	if rec.text() != "your key is [REDACTED] ok" {
		t.Fatalf("streamed text = %q", rec.text())
	}
	for _, ev := range rec.events {
		if strings.Contains(ev.Delta, testKey[:8]) && strings.Contains(ev.Delta, testKey[len(testKey)-8:]) {
			t.Fatalf("event carries the key: %+v", ev)
		}
	}
}

func TestOpenAIStreamOptionsRejected(t *testing.T) {
	srv := openai.NewServer(t,
		openai.Reply{Status: 400, ErrorMessage: "Unrecognized request argument supplied: stream_options"},
		openai.Reply{Text: "fine"},
		openai.Reply{Text: "again"},
	)
	p := newTestProvider(t, srv.URL, nil)
	for _, want := range []string{"fine", "again"} {
		resp, err := p.Stream(context.Background(), userRequest("hi"), nil)
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		if resp.Message.Content[0].Text != want {
			t.Fatalf("text = %q, want %q", resp.Message.Content[0].Text, want)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if _, ok := reqs[0]["stream_options"]; !ok {
		t.Fatal("first request lacks stream_options")
	}
	for i := 1; i < 3; i++ {
		if _, ok := reqs[i]["stream_options"]; ok {
			t.Fatalf("request %d still sends stream_options", i+1)
		}
	}
}

func TestNewOpenAIConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  OpenAIConfig
		want string
	}{
		{"no URL", OpenAIConfig{Model: "m"}, `base URL "": want an http(s) URL`},
		{"bad scheme", OpenAIConfig{BaseURL: "ftp://x/v1", Model: "m"}, `base URL "ftp://x/v1"`},
		{"no model", OpenAIConfig{BaseURL: "http://localhost:1/v1"}, "model: missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewOpenAI(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// wireMessages sends req to a test server and returns the messages it got.
func wireMessages(t *testing.T, req Request, images bool) ([]any, map[string]any) {
	t.Helper()
	srv := openai.NewServer(t, openai.Reply{Text: "ok"})
	p := newTestProvider(t, srv.URL, func(c *OpenAIConfig) { c.Images = images })
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0]
	msgs, _ := body["messages"].([]any)
	return msgs, body
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOpenAIWireMapping(t *testing.T) {
	png := content.Image("iVBORw0KGgo=", "image/png")
	req := Request{
		SystemPrompt: "You are pi.",
		Messages: []Message{
			{Role: RoleUser, Content: []content.Block{content.Text("look at a.png")}},
			{Role: RoleAssistant, Content: []content.Block{content.Text("Reading both.")}, ToolCalls: []ToolCall{
				{ID: "c1", Name: "read", Arguments: RawArguments(`{"path":"a.png"}`)}, {ID: "c2", Name: "read", Arguments: RawArguments(`{"path":"b.txt"}`)}}},
			{Role: RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []content.Block{png}},
			{Role: RoleToolResult, ToolCallID: "c2", ToolName: "read", Content: []content.Block{content.Text("line 1"), content.Text("line 2")}, IsError: true},
			{Role: RoleAssistant}, // an aborted empty turn is dropped
			{Role: RoleUser, Content: []content.Block{content.Text("and this"), png}},
		},
		Tools: []ToolSpec{
			{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "noargs", Description: "No parameters"},
		},
	}
	dataURL := "data:image/png;base64,iVBORw0KGgo="
	prefix := `[{"content":"You are pi.","role":"system"},` +
		`{"content":"look at a.png","role":"user"},` +
		`{"content":"Reading both.","role":"assistant","tool_calls":[` +
		`{"function":{"arguments":"{\"path\":\"a.png\"}","name":"read"},"id":"c1","type":"function"},` +
		`{"function":{"arguments":"{\"path\":\"b.txt\"}","name":"read"},"id":"c2","type":"function"}]},`

	t.Run("images on", func(t *testing.T) {
		msgs, body := wireMessages(t, req, true)
		want := prefix +
			`{"content":"(see attached image)","role":"tool","tool_call_id":"c1"},` +
			`{"content":"line 1\nline 2","role":"tool","tool_call_id":"c2"},` +
			`{"content":[{"text":"Attached image(s) from tool result:","type":"text"},{"image_url":{"url":"` + dataURL + `"},"type":"image_url"}],"role":"user"},` +
			`{"content":[{"text":"and this","type":"text"},{"image_url":{"url":"` + dataURL + `"},"type":"image_url"}],"role":"user"}]`
		if got := asJSON(t, msgs); got != want {
			t.Fatalf("messages:\n got %s\nwant %s", got, want)
		}
		wantTools := `[{"function":{"description":"Read a file","name":"read","parameters":{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}},"type":"function"},` +
			`{"function":{"description":"No parameters","name":"noargs","parameters":{"properties":{},"type":"object"}},"type":"function"}]`
		if got := asJSON(t, body["tools"]); got != wantTools {
			t.Fatalf("tools:\n got %s\nwant %s", got, wantTools)
		}
	})
	t.Run("images off", func(t *testing.T) {
		msgs, _ := wireMessages(t, req, false)
		want := prefix +
			`{"content":"(tool image omitted: model does not support images)","role":"tool","tool_call_id":"c1"},` +
			`{"content":"line 1\nline 2","role":"tool","tool_call_id":"c2"},` +
			`{"content":"and this\n(image omitted: model does not support images)","role":"user"}]`
		if got := asJSON(t, msgs); got != want {
			t.Fatalf("messages:\n got %s\nwant %s", got, want)
		}
		if strings.Contains(want, "base64") {
			t.Fatal("image data sent to a model without images")
		}
	})
	t.Run("empty tool result", func(t *testing.T) {
		msgs, _ := wireMessages(t, Request{Messages: []Message{
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c", Name: "write"}}},
			{Role: RoleToolResult, ToolCallID: "c"},
		}}, true)
		want := `[{"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"write"},"id":"c","type":"function"}]},` +
			`{"content":"(no output)","role":"tool","tool_call_id":"c"}]`
		if got := asJSON(t, msgs); got != want {
			t.Fatalf("messages:\n got %s\nwant %s", got, want)
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second, true},
		{"fractional", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, true},
		{"http date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second, true},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{"ms header wins", http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {"250"}}, 250 * time.Millisecond, true},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0, false},
		{"none", http.Header{}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseRetryAfter(tt.header, now)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("parseRetryAfter = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestRedactSecret(t *testing.T) {
	tests := []struct{ s, secret, want string }{
		{"key sk-1234567890 and sk-1234567890", "sk-1234567890", "key [REDACTED] and [REDACTED]"},
		{"nothing here", "sk-1234567890", "nothing here"},
		{"empty secret", "", "empty secret"},
		// A short key is not a secret: a.txt must stay a.txt.
		{"write a.txt", "x", "write a.txt"},
		{"the test passed", "test", "the test passed"},
		{"ollama at ollama:11434", "ollama", "ollama at ollama:11434"},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			if got := RedactSecret(tt.s, tt.secret); got != tt.want {
				t.Fatalf("RedactSecret(%q, %q) = %q, want %q", tt.s, tt.secret, got, tt.want)
			}
		})
	}
}

func TestOpenAIKeyNotLogged(t *testing.T) {
	// The server echoes the key in a retried error and in the final one.
	srv := openai.NewServer(t,
		openai.Reply{Status: 503, ErrorMessage: "bad key " + testKey},
		openai.Reply{Status: 401, ErrorMessage: "rejected " + testKey},
	)
	var logs bytes.Buffer
	p := newTestProvider(t, srv.URL+"?key="+testKey, func(c *OpenAIConfig) {
		c.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Trace})
	})
	_, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("err = %v, want ErrAuth", err)
	}
	if !strings.Contains(logs.String(), "retrying model request") || !strings.Contains(logs.String(), "[REDACTED]") {
		t.Fatalf("logs lack the redacted retry line:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), testKey) || strings.Contains(err.Error(), testKey) {
		t.Fatalf("the key leaked:\nerr=%v\nlogs=%s", err, logs.String())
	}
	if uri := srv.RequestURIs()[0]; uri != "/v1/chat/completions?key="+testKey {
		t.Fatalf("request URI = %q, want the base URL's query kept", uri)
	}
}

func TestBackoff(t *testing.T) {
	p, err := NewOpenAI(OpenAIConfig{BaseURL: "http://localhost:1/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		attempt  int
		min, max time.Duration
	}{
		{1, 500 * time.Millisecond, 750 * time.Millisecond},
		{2, time.Second, 1500 * time.Millisecond},
		{3, 2 * time.Second, 3 * time.Second},
		{7, 30 * time.Second, 45 * time.Second},  // capped
		{40, 30 * time.Second, 45 * time.Second}, // no overflow
		{70, 30 * time.Second, 45 * time.Second},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("attempt %d", tt.attempt), func(t *testing.T) {
			for range 50 {
				if d := p.backoff(tt.attempt); d < tt.min || d > tt.max {
					t.Fatalf("backoff(%d) = %v, want within [%v, %v]", tt.attempt, d, tt.min, tt.max)
				}
			}
		})
	}
}
