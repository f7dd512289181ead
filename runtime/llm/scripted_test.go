package llm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestParseScriptErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // substring of the error
	}{
		{"empty", ``, "empty input"},
		{"not an object", `[1]`, "parse script"},
		{"no turns", `{}`, "turns: missing"},
		{"unknown top field", `{"turns":[],"extra":1}`, `unknown field "extra"`},
		{"unknown turn field", `{"turns":[{"text":"a"},{"txt":"b"}]}`, `turns[1]: json: unknown field "txt"`},
		{"text wrong type", `{"turns":[{"text":3}]}`, `turns[0]: json: cannot unmarshal number`},
		{"call without name", `{"turns":[{"text":"a"},{"text":"b"},{"toolCalls":[{"arguments":{}}]}]}`, `turns[2].toolCalls[0].name: missing`},
		{"unknown call field", `{"turns":[{"toolCalls":[{"name":"a"},{"name":"b","args":{}}]}]}`, `turns[0].toolCalls[1]: json: unknown field "args"`},
		{"arguments an array", `{"turns":[{"toolCalls":[{"name":"a","arguments":[1]}]}]}`, `turns[0].toolCalls[0].arguments: want a JSON object or a string, got [1]`},
		{"bad stop reason", `{"turns":[{"stopReason":"done"}]}`, `turns[0].stopReason: unknown value "done"`},
		{"trailing data", `{"turns":[]} {}`, "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseScript(%q) succeeded, want error containing %q", tt.in, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseScript(%q) error = %q, want it to contain %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestLoadScript(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"turns":[{"text":"hi"},{"toolCalls":[{"name":"ls"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadScript(good)
	if err != nil {
		t.Fatalf("LoadScript: %v", err)
	}
	if len(s.Turns) != 2 || s.Turns[0].Text != "hi" || s.Turns[1].ToolCalls[0].Name != "ls" {
		t.Fatalf("LoadScript = %+v", s)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"turns":[{"toolCalls":[{}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadScript(bad)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "turns[0].toolCalls[0].name") {
		t.Fatalf("LoadScript(bad) error = %v, want path and field", err)
	}

	_, err = LoadScript(filepath.Join(dir, "missing.json"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("LoadScript(missing) error = %v, want ErrNotExist", err)
	}
}

func TestScriptedPlaysTurns(t *testing.T) {
	s, err := ParseScript([]byte(`{"turns":[
		{"text":"Let me look at the files first."},
		{"toolCalls":[{"name":"read","arguments":{"path": "a.txt"}},{"id":"mine","name":"ls"}]},
		{"text":"Running it.","toolCalls":[{"name":"bash","arguments":"{\"command\":"}],"usage":{"input":10,"output":3,"totalTokens":13}},
		{"text":"cut","stopReason":"length"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := NewScripted(s)
	ctx := context.Background()

	type played struct {
		text     string
		calls    []ToolCall
		stop     StopReason
		usage    Usage
		deltas   int
		argDelta map[int]string
		starts   []StreamEvent
	}
	play := func(req Request) played {
		t.Helper()
		var got played
		got.argDelta = map[int]string{}
		var text strings.Builder
		resp, err := p.Stream(ctx, req, func(ev StreamEvent) {
			switch ev.Type {
			case EventTextDelta:
				got.deltas++
				text.WriteString(ev.Delta)
			case EventToolCallStart:
				got.starts = append(got.starts, ev)
			case EventToolCallDelta:
				got.argDelta[ev.ToolCallIndex] += ev.Delta
			}
		})
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		if resp.Message.Role != RoleAssistant {
			t.Fatalf("role = %q", resp.Message.Role)
		}
		msgText := ""
		for _, b := range resp.Message.Content {
			msgText += b.Text
		}
		if msgText != text.String() {
			t.Fatalf("message text %q != streamed text %q", msgText, text.String())
		}
		got.text, got.calls, got.stop, got.usage = msgText, resp.Message.ToolCalls, resp.StopReason, resp.Usage
		for i, c := range got.calls {
			if got.argDelta[i] != string(c.Arguments) {
				t.Fatalf("streamed arguments %q != call arguments %q", got.argDelta[i], c.Arguments)
			}
		}
		return got
	}

	t1 := play(Request{Messages: []Message{{Role: RoleUser}}})
	if t1.text != "Let me look at the files first." || t1.stop != StopEnd || len(t1.calls) != 0 {
		t.Fatalf("turn 1 = %+v", t1)
	}
	if t1.deltas < 2 {
		t.Fatalf("turn 1 streamed in %d deltas, want a few", t1.deltas)
	}

	t2 := play(Request{})
	wantCalls := []ToolCall{{ID: "call_1", Name: "read", Arguments: RawArguments(`{"path":"a.txt"}`)}, {ID: "mine", Name: "ls", Arguments: RawArguments(`{}`)}}
	if t2.stop != StopToolUse || !reflect.DeepEqual(t2.calls, wantCalls) {
		t.Fatalf("turn 2 = %+v, want calls %+v", t2, wantCalls)
	}
	if len(t2.starts) != 2 || t2.starts[1].ToolCallID != "mine" || t2.starts[1].ToolName != "ls" || t2.starts[1].ToolCallIndex != 1 {
		t.Fatalf("turn 2 starts = %+v", t2.starts)
	}

	t3 := play(Request{})
	if t3.text != "Running it." || t3.stop != StopToolUse || len(t3.calls) != 1 ||
		t3.calls[0].ID != "call_3" || string(t3.calls[0].Arguments) != `{"command":` {
		t.Fatalf("turn 3 = %+v", t3)
	}
	if t3.usage != (Usage{InputTokens: 10, OutputTokens: 3, TotalTokens: 13}) {
		t.Fatalf("turn 3 usage = %+v", t3.usage)
	}

	t4 := play(Request{})
	if t4.stop != StopLength {
		t.Fatalf("turn 4 stop = %q", t4.stop)
	}

	_, err = p.Stream(ctx, Request{}, nil)
	if !errors.Is(err, ErrScriptEnded) || !strings.Contains(err.Error(), "script ended after 4 turns") {
		t.Fatalf("after the end: err = %v", err)
	}
	if reqs := p.Requests(); len(reqs) != 5 || len(reqs[0].Messages) != 1 {
		t.Fatalf("Requests() = %d requests", len(reqs))
	}
}

func TestScriptedErrorTurnAndCancel(t *testing.T) {
	p := NewScripted(Script{Turns: []ScriptTurn{{Error: "rate limited"}, {Text: "after"}}})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp, err := p.Stream(ctx, Request{}, nil)
	if err != nil || resp.StopReason != StopAborted {
		t.Fatalf("cancelled: resp=%+v err=%v, want StopAborted and no error", resp, err)
	}
	if p.Remaining() != 2 {
		t.Fatalf("a cancelled call consumed a turn: remaining %d", p.Remaining())
	}

	_, err = p.Stream(context.Background(), Request{}, nil)
	if err == nil || !strings.Contains(err.Error(), "rate limited") {
		t.Fatalf("error turn: err = %v", err)
	}

	// Cancel during the stream: the first text delta cancels.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	resp, err = p.Stream(ctx, Request{}, func(ev StreamEvent) { cancel() })
	if err != nil || resp.StopReason != StopAborted {
		t.Fatalf("cancel mid-stream: resp=%+v err=%v", resp, err)
	}
}

func TestScriptedConcurrent(t *testing.T) {
	const n = 50
	s := Script{}
	for range n {
		s.Turns = append(s.Turns, ScriptTurn{ToolCalls: []ScriptToolCall{{Name: "ls"}}})
	}
	p := NewScripted(s)
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]bool{}
	for range n + 5 {
		wg.Go(func() {
			resp, err := p.Stream(context.Background(), Request{}, func(StreamEvent) {})
			if err != nil {
				if !errors.Is(err, ErrScriptEnded) {
					t.Errorf("Stream: %v", err)
				}
				return
			}
			mu.Lock()
			seen[resp.Message.ToolCalls[0].ID] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("played %d distinct turns, want %d", len(seen), n)
	}
	if p.Remaining() != 0 {
		t.Fatalf("remaining = %d", p.Remaining())
	}
}

func TestSplitChunks(t *testing.T) {
	tests := []struct {
		in string
		n  int
	}{{"", 3}, {"a", 3}, {"hello world", 3}, {"héllo wörld ünïcode", 4}, {"ab", 5}}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			parts := splitChunks(tt.in, tt.n)
			if len(parts) > tt.n {
				t.Fatalf("%d parts, want at most %d", len(parts), tt.n)
			}
			if strings.Join(parts, "") != tt.in {
				t.Fatalf("parts %q do not join back to %q", parts, tt.in)
			}
			for _, p := range parts {
				if p == "" || !utf8Valid(p) {
					t.Fatalf("bad part %q", p)
				}
			}
		})
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// The script example in docs/models.md must stay a valid script.
func TestDocsScriptExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "models.md"))
	if err != nil {
		t.Fatalf("the docs example cannot be checked: %v", err)
	}
	_, rest, _ := strings.Cut(string(doc), "## The scripted provider")
	_, rest, ok := strings.Cut(rest, "```json\n")
	if !ok {
		t.Fatal("docs/models.md has no json example under \"## The scripted provider\"")
	}
	example, _, _ := strings.Cut(rest, "```")
	s, err := ParseScript([]byte(example))
	if err != nil {
		t.Fatalf("the docs example does not parse: %v", err)
	}
	if len(s.Turns) < 2 {
		t.Fatalf("the docs example has %d turns", len(s.Turns))
	}
}
