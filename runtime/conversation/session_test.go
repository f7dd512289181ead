package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openaitest "github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/compaction"
	"github.com/pi-go/pi/runtime/session"
)

// A second conversation on -c goes on from the first one's: the model is
// sent it, the new messages are appended to the same file, and
// session_start says it was resumed; Close sends session_shutdown.
func TestSessionResumeAcrossRuntimes(t *testing.T) {
	dir, home := project.New(t)
	sessDir := t.TempDir()
	srv := openaitest.NewServer(t,
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "read", Arguments: `{"path":"note.txt"}`}}},
		openaitest.Reply{Text: "The note says hello."},
		openaitest.Reply{Text: "You asked about the note."},
	)
	project.Write(t, filepath.Join(dir, "note.txt"), "hello\n")
	var log1 eventLog
	c := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{}, Options{OnEvent: log1.add})
	if c.Resumed() {
		t.Fatal("a new session is resumed")
	}
	if _, err := submit(t, c, "what does note.txt say?"); err != nil {
		t.Fatal(err)
	}
	file := c.Session().Path()
	c.Close()
	c.Runtime().Close()
	starts := log1.of(agent.EventSessionStart)
	if len(starts) != 1 || starts[0].SessionFile != file || *starts[0].Resumed || len(log1.of(agent.EventSessionShutdown)) != 1 {
		t.Fatalf("session events %+v", starts)
	}

	var log2 eventLog
	c2 := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{Continue: true}, Options{OnEvent: log2.add})
	if c2.Session().Path() != file || !c2.Resumed() {
		t.Fatalf("continued %s, want %s", c2.Session().Path(), file)
	}
	if _, err := submit(t, c2, "what did I ask?"); err != nil {
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
	c2.Close()
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
	if strings.Join(roles, ",") != "model_change,thinking_level_change,user,assistant,toolResult,assistant,user,assistant" {
		t.Fatalf("entries %v", roles)
	}
}

// Every change of session sends session_start for the new one (resumed
// only when it existed before), after the conversation's first.
func TestSessionStartOnEveryChange(t *testing.T) {
	dir, home := project.New(t)
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "a"})
	var log eventLog
	c := openSession(t, dir, home, t.TempDir(), srv.URL, SessionOptions{}, Options{OnEvent: log.add})
	if _, err := submit(t, c, "x"); err != nil {
		t.Fatal(err)
	}
	first := c.Session().ID()
	if err := c.NewSession(""); err != nil {
		t.Fatal(err)
	}
	if err := c.SwitchSession(first); err != nil {
		t.Fatal(err)
	}
	if err := c.Clone(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range log.of(agent.EventSessionStart) {
		r := "new"
		if *ev.Resumed {
			r = "resumed"
		}
		got = append(got, ev.SessionID+" "+r)
	}
	if len(got) != 4 || got[0] != first+" new" || strings.HasPrefix(got[1], first) || got[2] != first+" resumed" || !strings.HasSuffix(got[3], " new") || strings.HasPrefix(got[3], first) {
		t.Fatalf("session_start events %q", got)
	}
	if n := len(log.of(agent.EventSessionShutdown)); n != 0 {
		t.Fatalf("%d session_shutdown before Close", n)
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
			dir, home := project.New(t)
			// Keeping 1 token cuts at the new question (a user message):
			// the earlier exchange is summarized whole.
			project.Write(t, filepath.Join(home, "pi.toml"), "[compaction]\nkeep_recent_tokens = 1\n")
			sessDir := t.TempDir()
			// An earlier conversation in the session, to be summarized.
			first := openaitest.NewServer(t, openaitest.Reply{Text: strings.Repeat("earlier answer ", 50)})
			c := openSession(t, dir, home, sessDir, first.URL, SessionOptions{}, Options{})
			if _, err := submit(t, c, "earlier question"); err != nil {
				t.Fatal(err)
			}
			c.Close()
			c.Runtime().Close()

			srv := openaitest.NewServer(t, tc.replies...)
			var log eventLog
			c2 := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{Continue: true}, Options{OnEvent: log.add})
			res, err := submit(t, c2, "new question")
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
			for _, e := range c2.Session().Branch() {
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
// session is compacted (reason threshold); Compact (/compact) does the same
// by hand with its instructions; a compaction that fails says so in its
// event and the run's answer stands.
func TestThresholdAndManualCompaction(t *testing.T) {
	dir, home := project.New(t)
	// keep_recent_tokens 5 keeps the last exchange ("two" and "second
	// answer": 1 + 4 estimated tokens) and summarizes the first.
	project.Write(t, filepath.Join(home, "pi.toml"), "[model]\ncontext_window = 2000\n[compaction]\nreserve_tokens = 500\nkeep_recent_tokens = 5\n")
	srv := openaitest.NewServer(t,
		openaitest.Reply{Text: "first answer", Usage: &openaitest.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}},
		openaitest.Reply{Text: "second answer", Usage: &openaitest.Usage{PromptTokens: 1490, CompletionTokens: 20, TotalTokens: 1510}},
		openaitest.Reply{Text: "AUTO SUMMARY"},
		openaitest.Reply{Text: "third answer, longer than the others"},
		openaitest.Reply{Text: "MANUAL SUMMARY"},
		openaitest.Reply{Text: "PREFIX OF THE SPLIT TURN"},
	)
	var log eventLog
	c := openSession(t, dir, home, t.TempDir(), srv.URL, SessionOptions{}, Options{OnEvent: log.add})
	ctx := context.Background()
	for _, p := range []string{"one", "two"} {
		if _, err := submit(t, c, p); err != nil {
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
	if _, err := submit(t, c, "three"); err != nil {
		t.Fatal(err)
	}
	third := wireTexts(srv.Requests()[3])
	if !strings.Contains(third[1], "AUTO SUMMARY") || third[len(third)-1] != "user: three" {
		t.Fatalf("after compaction %q", third)
	}
	res, err := c.Compact(ctx, "the numbers asked for")
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
	if _, err := c.Compact(ctx, ""); !errors.Is(err, compaction.ErrAlreadyCompacted) {
		t.Fatalf("compacting twice = %v", err)
	}
	if end := log.of(agent.EventCompactionEnd); len(end) != 3 || end[2].ErrorMessage == "" {
		t.Fatalf("a failed compaction is not reported: %+v", end)
	}
}

// Extension state: an extension's session.append writes custom entries to
// the conversation's session file with the key redacted, session.entries
// reads them back by type, they never reach the model, bad ones are
// refused; the extension follows the conversation to a new session, and
// has none once it is closed.
func TestSessionCustomEntries(t *testing.T) {
	dir, home := project.Raw(t, project.RawEntry{Name: "raw11"})
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "ok"}, openaitest.Reply{Text: "ok again"})
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true, Model: app.ModelOptions{Name: "m", BaseURL: srv.URL, APIKey: testKey}})
	c := open(t, rt, Options{Session: &SessionOptions{Dir: t.TempDir()}})
	call := func(method string, params any) string {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"method": method, "params": params})
		res, err := rt.CallTool(context.Background(), "probe", "c", in, nil)
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v, %v", method, res, err)
		}
		return res.Text()
	}
	if got := call("session.append", map[string]any{"customType": "my-ext", "data": map[string]any{"count": 1, "leak": testKey}}); !strings.HasPrefix(got, `{"ok":true`) {
		t.Fatalf("append = %s", got)
	}
	if got := call("session.append", map[string]any{"customType": "bad type", "data": 1}); !strings.Contains(got, `"ok":false`) {
		t.Fatalf("a bad customType = %s", got)
	}
	if _, err := submit(t, c, "hi, my key is "+testKey); err != nil {
		t.Fatal(err)
	}
	call("session.append", map[string]any{"customType": "my-ext", "data": map[string]any{"count": 2}})
	var got struct {
		Result struct {
			Entries []struct {
				CustomType string          `json:"customType"`
				Data       json.RawMessage `json:"data"`
			} `json:"entries"`
		} `json:"result"`
	}
	raw := call("session.entries", map[string]any{"customType": "my-ext"})
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if e := got.Result.Entries; len(e) != 2 || string(e[0].Data) != `{"count":1,"leak":"[REDACTED]"}` || string(e[1].Data) != `{"count":2}` {
		t.Fatalf("entries %s", raw)
	}
	if other := call("session.entries", map[string]any{"customType": "other"}); strings.Contains(other, "count") {
		t.Fatalf("filter by customType: %s", other)
	}
	if all := call("session.entries", map[string]any{}); strings.Count(all, "count") != 2 {
		t.Fatalf("all entries: %s", all)
	}
	if _, err := submit(t, c, "again"); err != nil {
		t.Fatal(err)
	}
	for _, raw := range srv.RawRequests() {
		if strings.Contains(string(raw), "count") {
			t.Fatal("a custom entry reached the model")
		}
	}
	path := c.Session().Path()
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), testKey) || !strings.Contains(string(data), `"customType":"my-ext"`) ||
		!strings.Contains(string(data), "my key is [REDACTED]") {
		t.Fatalf("file %s", data)
	}
	// A new session has no entries of its own; a closed conversation
	// leaves the extension with the runtime's session in memory (empty).
	if err := c.NewSession(""); err != nil {
		t.Fatal(err)
	}
	if got := call("session.entries", map[string]any{}); strings.Contains(got, "count") {
		t.Fatalf("the new session has entries: %s", got)
	}
	c.Close()
	in, _ := json.Marshal(map[string]any{"method": "session.entries", "params": map[string]any{}})
	if res, _ := rt.CallTool(context.Background(), "probe", "c", in, nil); !strings.Contains(res.Text(), `"entries":[]`) {
		t.Fatalf("after Close: %s", res.Text())
	}
}

// --no-session writes nothing; a session in use by another conversation
// cannot be opened again, and the error says to fork; --fork makes a new
// file; an unknown id is refused.
func TestSessionDisabledLockedAndFork(t *testing.T) {
	dir, home := project.New(t)
	sessDir := t.TempDir()
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "a"}, openaitest.Reply{Text: "b"}, openaitest.Reply{Text: "c"})
	none := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{Disabled: true}, Options{})
	if _, err := submit(t, none, "x"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(sessDir); len(ents) != 0 {
		t.Fatalf("--no-session wrote %v", ents)
	}
	c := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{}, Options{})
	if _, err := submit(t, c, "y"); err != nil {
		t.Fatal(err)
	}
	file := c.Session().Path()
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home})
	_, err := New(rt, Options{Session: &SessionOptions{Dir: sessDir, Path: file}})
	if !errors.Is(err, session.ErrLocked) || !strings.Contains(err.Error(), "--fork") {
		t.Fatalf("second New = %v", err)
	}
	id := c.Session().ID()
	fork := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{Fork: id[:20]}, Options{})
	if fork.Session().Path() == file || fork.Session().Header().ParentSession != file {
		t.Fatalf("fork %s header %+v", fork.Session().Path(), fork.Session().Header())
	}
	if _, err := submit(t, fork, "z"); err != nil {
		t.Fatal(err)
	}
	if got := wireTexts(srv.Requests()[2]); !strings.Contains(strings.Join(got, "|"), "user: y|assistant: b|user: z") {
		t.Fatalf("fork request %q", got)
	}
	if _, err := New(rt, Options{Session: &SessionOptions{Dir: sessDir, Path: "ffffffffff"}}); !errors.Is(err, session.ErrNoMatch) {
		t.Fatalf("unknown id = %v", err)
	}
}
