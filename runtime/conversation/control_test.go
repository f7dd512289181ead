package conversation

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	openaitest "github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/tool"
)

// A person's command reaches the model with the next prompt, as the
// reference sends it, and is kept in the session as a bashExecution
// message; the key is not in what is recorded. It joins the conversation
// before the agent is built and after.
func TestRunBashRecorded(t *testing.T) {
	dir, home, sessDir := t.TempDir(), t.TempDir(), t.TempDir()
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "seen"}, openaitest.Reply{Text: "seen again"})
	c := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{}, Options{})
	var mu sync.Mutex
	var updates []string
	res, err := c.RunBash(context.Background(), "echo hello; echo "+testKey+"; exit 4", func(out string) {
		mu.Lock()
		updates = append(updates, out)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == nil || *res.ExitCode != 4 || strings.Contains(res.Output, "sk-test-key") || !strings.HasPrefix(res.Output, "hello\n") {
		t.Fatalf("result %+v", res)
	}
	mu.Lock()
	if len(updates) == 0 {
		t.Error("no output streamed")
	}
	mu.Unlock()
	if _, err := submit(t, c, "what did it say?"); err != nil {
		t.Fatal(err)
	}
	got := wireTexts(srv.Requests()[0])
	want := "user: Ran `echo hello; echo [REDACTED]; exit 4`\n```\nhello\n[REDACTED]\n\n```\n\nCommand exited with code 4"
	if len(got) < 3 || got[1] != want || got[2] != "user: what did it say?" {
		t.Fatalf("request %q\nwant [1] %q", got, want)
	}
	ctx := c.Session().Context()
	if ctx[0].Role != session.RoleBashExecution {
		t.Fatalf("session context starts with %q", ctx[0].Role)
	}
	// Now the agent exists: the next command joins its conversation too.
	if _, err := c.RunBash(context.Background(), "echo later", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := submit(t, c, "and now?"); err != nil {
		t.Fatal(err)
	}
	got = wireTexts(srv.Requests()[1])
	if n := len(got); n < 2 || got[n-2] != "user: Ran `echo later`\n```\nlater\n\n```" || got[n-1] != "user: and now?" {
		t.Fatalf("second request %q", got)
	}
}

// gatedProvider answers every call with "done"; the call number blockAt
// (from 1) only once release is closed, or as aborted when ctx ends.
// started is closed when that call began.
type gatedProvider struct {
	blockAt          int
	started, release chan struct{}
	mu               sync.Mutex
	calls            int
}

func newGated(blockAt int) *gatedProvider {
	return &gatedProvider{blockAt: blockAt, started: make(chan struct{}), release: make(chan struct{})}
}

func (p *gatedProvider) Stream(ctx context.Context, req llm.Request, on func(llm.StreamEvent)) (*llm.Response, error) {
	p.mu.Lock()
	p.calls++
	n := p.calls
	p.mu.Unlock()
	if n == p.blockAt {
		close(p.started)
		select {
		case <-p.release:
		case <-ctx.Done():
			return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, StopReason: llm.StopAborted}, nil
		}
	}
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []tool.ContentBlock{tool.Text("done")}}, StopReason: llm.StopEnd}, nil
}

// Sessions change between runs only: new, switch (by id prefix), fork at a
// user message, clone, name; each refuses while a run goes on, and a
// person's command run meanwhile joins the conversation when it ends.
func TestSessionControl(t *testing.T) {
	dir, home, sessDir := t.TempDir(), t.TempDir(), t.TempDir()
	gp := newGated(3)
	c := openSession(t, dir, home, sessDir, "http://127.0.0.1:1", SessionOptions{}, Options{Provider: gp, ModelName: "gated"})
	for _, p := range []string{"first", "second"} {
		if _, err := submit(t, c, p); err != nil {
			t.Fatal(err)
		}
	}
	first := c.Session()
	firstPath, firstID := first.Path(), first.ID()
	if err := c.SetSessionName("  my work "); err != nil || first.Name() != "my work" {
		t.Fatalf("name %q, %v", first.Name(), err)
	}
	if err := c.SetSessionName("  "); err == nil {
		t.Fatal("an empty name was taken")
	}
	points := c.ForkPoints()
	if len(points) != 2 || points[1].Text != "second" {
		t.Fatalf("fork points %+v", points)
	}

	// Busy: a run in progress refuses every change.
	done := make(chan error, 1)
	go func() { _, err := submit(t, c, "third"); done <- err }()
	<-gp.started
	if !c.Busy() {
		t.Error("Busy is false while a run goes on")
	}
	for name, f := range map[string]func() error{
		"new":     func() error { return c.NewSession("") },
		"switch":  func() error { return c.SwitchSession(firstPath) },
		"fork":    func() error { _, err := c.Fork(points[0].EntryID); return err },
		"clone":   c.Clone,
		"compact": func() error { _, err := c.Compact(context.Background(), ""); return err },
		"prompt":  func() error { _, err := submit(t, c, "fourth"); return err },
	} {
		if err := f(); !errors.Is(err, agent.ErrBusy) {
			t.Errorf("%s while running: %v, want ErrBusy", name, err)
		}
	}
	// A person's command runs now and joins the conversation after the run.
	if res, err := c.RunBash(context.Background(), "echo meanwhile", nil); err != nil || res.Output != "meanwhile\n" {
		t.Fatalf("bash while running: %+v, %v", res, err)
	}
	if last := c.Session().Context(); last[len(last)-1].Role == session.RoleBashExecution {
		t.Fatal("the command was recorded in the middle of the run")
	}
	close(gp.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ctx := c.Session().Context()
	if last := ctx[len(ctx)-1]; last.Role != session.RoleBashExecution || last.Command != "echo meanwhile" || ctx[len(ctx)-2].Role != session.RoleAssistant {
		t.Fatalf("after the run the session ends with %+v", last)
	}

	// Fork at the second prompt: the new session holds the first exchange
	// and names the old file.
	text, err := c.Fork(points[1].EntryID)
	if err != nil || text != "second" {
		t.Fatalf("fork = %q, %v", text, err)
	}
	forked := c.Session()
	if forked.ID() == firstID || forked.Header().ParentSession != firstPath || len(forked.Context()) != 2 {
		t.Fatalf("forked session %+v with %d messages", forked.Header(), len(forked.Context()))
	}
	if _, err := c.Fork("nope"); !errors.Is(err, ErrNotUserMessage) {
		t.Fatalf("fork at an unknown entry: %v", err)
	}
	// The first file is closed and unlocked: switching back by id prefix
	// works; switching to the session we are in does nothing.
	if err := c.SwitchSession(firstID[:13]); err != nil {
		t.Fatal(err)
	}
	if c.Session().ID() != firstID || !c.Resumed() {
		t.Fatalf("switched to %s", c.Session().ID())
	}
	if err := c.SwitchSession(firstPath); err != nil {
		t.Fatal(err)
	}
	if err := c.Clone(); err != nil {
		t.Fatal(err)
	}
	// (the first session holds the third exchange and the command too)
	if cl := c.Session(); cl.ID() == firstID || len(cl.Context()) != 7 {
		t.Fatalf("clone %s has %d messages", cl.ID(), len(cl.Context()))
	}
	if err := c.NewSession(firstPath); err != nil {
		t.Fatal(err)
	}
	if n := c.Session(); len(n.Context()) != 0 || n.Header().ParentSession != firstPath {
		t.Fatalf("new session %+v", n.Header())
	}
	if err := c.SwitchSession(filepath.Join(sessDir, "missing.jsonl")); err == nil {
		t.Fatal("switched to a missing file")
	}
}

// A prompt the provider refused is not left in the session: resuming it
// sends no two user messages in a row.
func TestFailedPromptLeavesSession(t *testing.T) {
	dir, home, sessDir := t.TempDir(), t.TempDir(), t.TempDir()
	srv := openaitest.NewServer(t,
		openaitest.Reply{Text: "hi"},
		openaitest.Reply{Status: 400, ErrorMessage: "bad request"},
	)
	c := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{}, Options{})
	if _, err := submit(t, c, "hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := submit(t, c, "refused"); err == nil {
		t.Fatal("no error")
	}
	path := c.Session().Path()
	c.Close()

	srv.Add(openaitest.Reply{Text: "answered"})
	c2 := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{Path: path}, Options{})
	if _, err := submit(t, c2, "again"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	got := wireTexts(reqs[len(reqs)-1])
	want := []string{"user: hello", "assistant: hi", "user: again"}
	if !reflect.DeepEqual(got[1:], want) {
		t.Fatalf("resumed request %q, want %q", got[1:], want)
	}
	// The refused prompt is still in the file, on a branch of its own.
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"refused"`) {
		t.Fatal("the refused prompt is not in the file")
	}
}

// SetModel changes the model from the next prompt on, on the same
// endpoint, and refuses a provider without a key, naming the variable; a
// scripted model cannot be changed.
func TestSetModel(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "ok"})
	c := openSession(t, t.TempDir(), t.TempDir(), t.TempDir(), srv.URL, SessionOptions{}, Options{})
	m, err := c.Model()
	if err != nil || m.ID != "m" || m.Provider != "127.0.0.1" || m.API != "openai-completions" {
		t.Fatalf("model %+v, %v", m, err)
	}
	if err := c.SetModel("anthropic", "claude-sonnet-4-5"); err == nil || !strings.Contains(err.Error(), "set ANTHROPIC_API_KEY") {
		t.Fatalf("another provider: %v", err)
	}
	if err := c.SetModel(m.Provider, "bigger"); err != nil {
		t.Fatal(err)
	}
	if c.ModelName() != "bigger" {
		t.Fatalf("ModelName = %q", c.ModelName())
	}
	if _, err := submit(t, c, "hi"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0]["model"]; got != "bigger" {
		t.Fatalf("request model %v", got)
	}
	if p, name := c.Session().Model(); name != "bigger" {
		t.Fatalf("session model %s/%s", p, name)
	}
	st := c.Stats()
	if st.UserMessages != 1 || st.AssistantMessages != 1 || st.ContextUsage == nil || st.ContextUsage.ContextWindow == 0 {
		t.Fatalf("stats %+v", st)
	}
	// A scripted model cannot be changed.
	sc := open(t, c.Runtime(), Options{Provider: llm.NewScripted(llm.Script{}), ModelName: "script"})
	if err := sc.SetModel("", "x"); err == nil {
		t.Fatal("changed a scripted model")
	}
}
