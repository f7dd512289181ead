package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/internal/openaitest"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/compaction"
	"github.com/pi-go/pi/runtime/session"
)

// eventLog records the events of a run.
type eventLog struct {
	mu     sync.Mutex
	events []agent.Event
}

func (l *eventLog) add(ev agent.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

func (l *eventLog) of(t agent.EventType) []agent.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []agent.Event
	for _, ev := range l.events {
		if ev.Type == t {
			out = append(out, ev)
		}
	}
	return out
}

// openSessionRuntime opens a runtime on srv with a session in sessDir.
func openSessionRuntime(t *testing.T, dir, home, sessDir, url string, so SessionOptions) *Runtime {
	t.Helper()
	so.Dir = sessDir
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Model: ModelOptions{Name: "m", BaseURL: url, APIKey: "sk-test-key-0123456789"}, Session: &so})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// wireTexts flattens the messages of a request body: "role: text".
func wireTexts(body map[string]any) []string {
	var out []string
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm := m.(map[string]any)
		text := ""
		switch c := mm["content"].(type) {
		case string:
			text = c
		case []any:
			for _, p := range c {
				if s, ok := p.(map[string]any)["text"].(string); ok {
					text += s
				}
			}
		}
		if calls, ok := mm["tool_calls"].([]any); ok {
			for _, c := range calls {
				f := c.(map[string]any)["function"].(map[string]any)
				text += fmt.Sprintf("[call %v %v]", f["name"], f["arguments"])
			}
		}
		out = append(out, fmt.Sprintf("%v: %s", mm["role"], text))
	}
	return out
}

// A second runtime on -c goes on from the first one's conversation: the
// model is sent it, the new messages are appended to the same file, and
// session_start says it was resumed.
func TestSessionResumeAcrossRuntimes(t *testing.T) {
	dir, home := project(t)
	sessDir := t.TempDir()
	srv := openaitest.NewServer(t,
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "read", Arguments: `{"path":"note.txt"}`}}},
		openaitest.Reply{Text: "The note says hello."},
		openaitest.Reply{Text: "You asked about the note."},
	)
	write(t, filepath.Join(dir, "note.txt"), "hello\n")
	rt := openSessionRuntime(t, dir, home, sessDir, srv.URL, SessionOptions{})
	var log1 eventLog
	ag, err := rt.NewAgent(AgentOptions{OnEvent: log1.add})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Prompt(context.Background(), "what does note.txt say?"); err != nil {
		t.Fatal(err)
	}
	file := rt.Session().Path()
	rt.Close()
	starts := log1.of(agent.EventSessionStart)
	if len(starts) != 1 || starts[0].SessionFile != file || *starts[0].Resumed || len(log1.of(agent.EventSessionShutdown)) != 1 {
		t.Fatalf("session events %+v", starts)
	}

	rt2 := openSessionRuntime(t, dir, home, sessDir, srv.URL, SessionOptions{Continue: true})
	if rt2.Session().Path() != file || !rt2.SessionResumed() {
		t.Fatalf("continued %s, want %s", rt2.Session().Path(), file)
	}
	var log2 eventLog
	ag2, err := rt2.NewAgent(AgentOptions{OnEvent: log2.add})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag2.Prompt(context.Background(), "what did I ask?"); err != nil {
		t.Fatal(err)
	}
	if s := log2.of(agent.EventSessionStart); len(s) != 1 || !*s[0].Resumed {
		t.Fatalf("second session_start %+v", s)
	}
	got := wireTexts(srv.Requests()[2])[1:]
	want := []string{
		"user: what does note.txt say?",
		`assistant: [call read {"path":"note.txt"}]`,
		"tool: hello\n",
		"assistant: The note says hello.",
		"user: what did I ask?",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("resumed request\n got %q\nwant %q", got, want)
	}
	rt2.Close()
	r, err := session.Read(file, session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, e := range r.Entries() {
		if m, err := e.Message(); err == nil {
			roles = append(roles, m.Role)
		} else {
			roles = append(roles, e.Type)
		}
	}
	if strings.Join(roles, ",") != "model_change,user,assistant,toolResult,assistant,user,assistant" {
		t.Fatalf("entries %v", roles)
	}
}

// The loopback server answers once that the context is too long: the
// conversation is compacted (one summarizing call) and the run retried
// once, and goes on from the summary. A second overflow right after is
// not retried again.
func TestOverflowCompactsAndRetriesOnce(t *testing.T) {
	overflow := openaitest.Reply{Status: 400, ErrorMessage: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."}
	for _, tc := range []struct {
		name      string
		replies   []openaitest.Reply
		wantErr   string
		wantCalls int
	}{
		{"retried", []openaitest.Reply{overflow, {Text: "SUMMARY OF EARLIER WORK"}, {Text: "answer after compaction"}}, "", 3},
		{"second overflow", []openaitest.Reply{overflow, {Text: "SUMMARY OF EARLIER WORK"}, overflow}, "after one compact-and-retry attempt", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, home := project(t)
			// Keeping 1 token cuts at the new question (a user message):
			// the earlier exchange is summarized whole.
			write(t, filepath.Join(home, "pi.toml"), "[compaction]\nkeep_recent_tokens = 1\n")
			sessDir := t.TempDir()
			// An earlier conversation in the session, to be summarized.
			first := openaitest.NewServer(t, openaitest.Reply{Text: strings.Repeat("earlier answer ", 50)})
			rt := openSessionRuntime(t, dir, home, sessDir, first.URL, SessionOptions{})
			ag, _ := rt.NewAgent(AgentOptions{})
			if _, err := ag.Prompt(context.Background(), "earlier question"); err != nil {
				t.Fatal(err)
			}
			rt.Close()

			srv := openaitest.NewServer(t, tc.replies...)
			rt2 := openSessionRuntime(t, dir, home, sessDir, srv.URL, SessionOptions{Continue: true})
			var log eventLog
			ag2, _ := rt2.NewAgent(AgentOptions{OnEvent: log.add})
			res, err := ag2.Prompt(context.Background(), "new question")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil || res.Text != "answer after compaction" {
				t.Fatalf("res %+v, %v", res, err)
			}
			reqs := srv.Requests()
			if len(reqs) != tc.wantCalls {
				t.Fatalf("%d requests, want %d", len(reqs), tc.wantCalls)
			}
			sum := wireTexts(reqs[1])
			if !strings.Contains(sum[0], "summarize") || !strings.Contains(sum[1], "[User]: earlier question") || reqs[1]["tools"] != nil {
				t.Fatalf("request 2 is not the summarizing call: %.300q", sum)
			}
			retry := wireTexts(reqs[2])[1:]
			if !strings.Contains(retry[0], "compacted into the following summary:\n\n<summary>\nSUMMARY OF EARLIER WORK") ||
				retry[len(retry)-1] != "user: new question" {
				t.Fatalf("retried request %q", retry)
			}
			for _, line := range retry {
				if strings.Contains(line, "earlier question") {
					t.Fatalf("the summarized question was sent again: %q", retry)
				}
			}
			st, end := log.of(agent.EventCompactionStart), log.of(agent.EventCompactionEnd)
			if len(st) != 1 || st[0].Reason != agent.CompactOverflow || len(end) != 1 || !*end[0].WillRetry || end[0].Compaction == nil {
				t.Fatalf("compaction events %+v / %+v", st, end)
			}
			b, _ := json.Marshal(end[0])
			if !strings.Contains(string(b), `"result":{"summary":"SUMMARY OF EARLIER WORK`) || !strings.Contains(string(b), `"willRetry":true`) {
				t.Fatalf("compaction_end JSON %s", b)
			}
			var compactions int
			for _, e := range rt2.Session().Branch() {
				if e.Type == session.TypeCompaction {
					compactions++
				}
			}
			if compactions != 1 {
				t.Fatalf("%d compaction entries", compactions)
			}
		})
	}
}

// After a run whose usage passes context_window - reserve_tokens the
// session is compacted (reason threshold); /compact does the same by hand
// with its instructions; a compaction that fails says so in its event and
// the run's answer stands.
func TestThresholdAndManualCompaction(t *testing.T) {
	dir, home := project(t)
	// keep_recent_tokens 5 keeps the last exchange ("two" and "second
	// answer": 1 + 4 estimated tokens) and summarizes the first.
	write(t, filepath.Join(home, "pi.toml"), "[model]\ncontext_window = 2000\n[compaction]\nreserve_tokens = 500\nkeep_recent_tokens = 5\n")
	srv := openaitest.NewServer(t,
		openaitest.Reply{Text: "first answer", Usage: &openaitest.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}},
		openaitest.Reply{Text: "second answer", Usage: &openaitest.Usage{PromptTokens: 1490, CompletionTokens: 20, TotalTokens: 1510}},
		openaitest.Reply{Text: "AUTO SUMMARY"},
		openaitest.Reply{Text: "third answer, longer than the others"},
		openaitest.Reply{Text: "MANUAL SUMMARY"},
		openaitest.Reply{Text: "PREFIX OF THE SPLIT TURN"},
	)
	rt := openSessionRuntime(t, dir, home, t.TempDir(), srv.URL, SessionOptions{})
	var log eventLog
	ag, _ := rt.NewAgent(AgentOptions{OnEvent: log.add})
	ctx := context.Background()
	for _, p := range []string{"one", "two"} {
		if _, err := ag.Prompt(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests after the threshold run, want 3 (the summary)", n)
	}
	if st := log.of(agent.EventCompactionStart); len(st) != 1 || st[0].Reason != agent.CompactThreshold {
		t.Fatalf("compaction_start %+v", st)
	}
	if end := log.of(agent.EventCompactionEnd); len(end) != 1 || *end[0].WillRetry {
		t.Fatalf("compaction_end %+v", end)
	}
	if _, err := ag.Prompt(ctx, "three"); err != nil {
		t.Fatal(err)
	}
	third := wireTexts(srv.Requests()[3])
	if !strings.Contains(third[1], "AUTO SUMMARY") || third[len(third)-1] != "user: three" {
		t.Fatalf("after compaction %q", third)
	}
	res, err := rt.Compact(ctx, "the numbers asked for")
	if err != nil || !strings.HasPrefix(res.Summary, "MANUAL SUMMARY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX OF THE SPLIT TURN") {
		t.Fatalf("Compact = %+v, %v", res, err)
	}
	manual := wireTexts(srv.Requests()[4])
	if !strings.Contains(manual[1], "<previous-summary>\nAUTO SUMMARY") || !strings.Contains(manual[1], "Focus especially on: the numbers asked for") {
		t.Fatalf("manual compaction prompt %.400q", manual[1])
	}
	if st := log.of(agent.EventCompactionStart); len(st) != 2 || st[1].Reason != agent.CompactManual {
		t.Fatalf("manual compaction_start %+v", st)
	}
	if _, err := rt.Compact(ctx, ""); !errors.Is(err, compaction.ErrAlreadyCompacted) {
		t.Fatalf("compacting twice = %v", err)
	}
	if end := log.of(agent.EventCompactionEnd); len(end) != 3 || end[2].ErrorMessage == "" {
		t.Fatalf("a failed compaction is not reported: %+v", end)
	}
}

// Extension state: custom entries follow the branch, are written to the
// file with the key redacted, and never reach the model; bad ones are
// refused.
func TestSessionCustomEntries(t *testing.T) {
	dir, home := project(t)
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "ok"}, openaitest.Reply{Text: "ok again"})
	sessDir := t.TempDir()
	rt := openSessionRuntime(t, dir, home, sessDir, srv.URL, SessionOptions{})
	ag, _ := rt.NewAgent(AgentOptions{})
	if _, err := rt.SessionAppend("my-ext", json.RawMessage(`{"count":1,"leak":"sk-test-key-0123456789"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.SessionAppend("bad type", json.RawMessage(`1`)); !errors.Is(err, session.ErrBadCustom) {
		t.Fatalf("bad customType = %v", err)
	}
	if _, err := ag.Prompt(context.Background(), "hi, my key is sk-test-key-0123456789"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.SessionAppend("my-ext", json.RawMessage(`{"count":2}`)); err != nil {
		t.Fatal(err)
	}
	got := rt.SessionEntries("my-ext")
	if len(got) != 2 || string(got[0].Data) != `{"count":1,"leak":"[REDACTED]"}` || string(got[1].Data) != `{"count":2}` {
		t.Fatalf("entries %+v", got)
	}
	if len(rt.SessionEntries("other")) != 0 || len(rt.SessionEntries("")) != 2 {
		t.Fatal("filter by customType")
	}
	if _, err := ag.Prompt(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	for _, raw := range srv.RawRequests() {
		if strings.Contains(string(raw), "count") {
			t.Fatal("a custom entry reached the model")
		}
	}
	data, _ := os.ReadFile(rt.Session().Path())
	if strings.Contains(string(data), "sk-test-key-0123456789") || !strings.Contains(string(data), `"customType":"my-ext"`) ||
		!strings.Contains(string(data), "my key is [REDACTED]") {
		t.Fatalf("file %s", data)
	}
}

// --no-session writes nothing; a session in use by another runtime cannot
// be opened again, and the error says to fork; --fork makes a new file.
func TestSessionDisabledLockedAndFork(t *testing.T) {
	dir, home := project(t)
	sessDir := t.TempDir()
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "a"}, openaitest.Reply{Text: "b"}, openaitest.Reply{Text: "c"})
	none := openSessionRuntime(t, dir, home, sessDir, srv.URL, SessionOptions{Disabled: true})
	ag, _ := none.NewAgent(AgentOptions{})
	if _, err := ag.Prompt(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(sessDir); len(ents) != 0 {
		t.Fatalf("--no-session wrote %v", ents)
	}
	rt := openSessionRuntime(t, dir, home, sessDir, srv.URL, SessionOptions{})
	ag1, _ := rt.NewAgent(AgentOptions{})
	if _, err := ag1.Prompt(context.Background(), "y"); err != nil {
		t.Fatal(err)
	}
	file := rt.Session().Path()
	_, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Session: &SessionOptions{Dir: sessDir, Path: file}})
	if !errors.Is(err, session.ErrLocked) || !strings.Contains(err.Error(), "--fork") {
		t.Fatalf("second Open = %v", err)
	}
	id := rt.Session().ID()
	fork := openSessionRuntime(t, dir, home, sessDir, srv.URL, SessionOptions{Fork: id[:20]})
	if fork.Session().Path() == file || fork.Session().Header().ParentSession != file {
		t.Fatalf("fork %s header %+v", fork.Session().Path(), fork.Session().Header())
	}
	ag2, _ := fork.NewAgent(AgentOptions{})
	if _, err := ag2.Prompt(context.Background(), "z"); err != nil {
		t.Fatal(err)
	}
	if got := wireTexts(srv.Requests()[2]); !strings.Contains(strings.Join(got, "|"), "user: y|assistant: b|user: z") {
		t.Fatalf("fork request %q", got)
	}
	if _, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Session: &SessionOptions{Dir: sessDir, Path: "ffffffffff"}}); !errors.Is(err, session.ErrNoMatch) {
		t.Fatalf("unknown id = %v", err)
	}
}
