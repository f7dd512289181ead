package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/tool"
)

// A person's command reaches the model with the next prompt, as the
// reference sends it, and is kept in the session as a bashExecution
// message; the key is not in what is recorded.
func TestRunBashRecorded(t *testing.T) {
	dir, home, sessDir := t.TempDir(), t.TempDir(), t.TempDir()
	srv := openai.NewServer(t, openai.Reply{Text: "seen"})
	rt := openSessionRuntime(t, dir, home, sessDir, srv.URL, SessionOptions{})
	ag, err := rt.NewAgent(AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var updates []string
	res, err := rt.RunBash(context.Background(), "echo hello; echo sk-test-key-0123456789; exit 4", func(out string) {
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
	if err := rt.RecordBash("echo hello; echo sk-test-key-0123456789; exit 4", res); err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Prompt(context.Background(), "what did it say?"); err != nil {
		t.Fatal(err)
	}
	got := wireTexts(srv.Requests()[0])
	want := "user: Ran `echo hello; echo [REDACTED]; exit 4`\n```\nhello\n[REDACTED]\n\n```\n\nCommand exited with code 4"
	if len(got) < 3 || got[1] != want || got[2] != "user: what did it say?" {
		t.Fatalf("request %q\nwant [1] %q", got, want)
	}
	ctx := rt.Session().Context()
	if ctx[0].Role != session.RoleBashExecution {
		t.Fatalf("session context starts with %q", ctx[0].Role)
	}
}

// blockingProvider answers once release is closed (or ctx ends); started
// is closed when the first call began.
type blockingProvider struct {
	started, release chan struct{}
	once             sync.Once
}

func (p *blockingProvider) Stream(ctx context.Context, req llm.Request, on func(llm.StreamEvent)) (*llm.Response, error) {
	p.once.Do(func() { close(p.started) })
	select {
	case <-p.release:
	case <-ctx.Done():
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, StopReason: llm.StopAborted}, nil
	}
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []tool.ContentBlock{tool.Text("done")}}, StopReason: llm.StopEnd}, nil
}

// Sessions change between runs only: new, switch (by id prefix), fork at a
// user message, clone, name; each refuses while the agent runs.
func TestSessionControl(t *testing.T) {
	dir, home, sessDir := t.TempDir(), t.TempDir(), t.TempDir()
	srv := openai.NewServer(t, openai.Reply{Text: "one"}, openai.Reply{Text: "two"})
	rt := openSessionRuntime(t, dir, home, sessDir, srv.URL, SessionOptions{})
	ag, err := rt.NewAgent(AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"first", "second"} {
		if _, err := ag.Prompt(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	first := rt.Session()
	firstPath, firstID := first.Path(), first.ID()
	if err := rt.SetSessionName("  my work "); err != nil || first.Name() != "my work" {
		t.Fatalf("name %q, %v", first.Name(), err)
	}
	if err := rt.SetSessionName("  "); err == nil {
		t.Fatal("an empty name was taken")
	}
	points := rt.ForkPoints()
	if len(points) != 2 || points[1].Text != "second" {
		t.Fatalf("fork points %+v", points)
	}

	// Busy: a run in progress refuses every change.
	bp := &blockingProvider{started: make(chan struct{}), release: make(chan struct{})}
	busy, err := rt.NewAgent(AgentOptions{Provider: bp})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := busy.Prompt(context.Background(), "third"); done <- err }()
	<-bp.started
	for name, f := range map[string]func() error{
		"new":    func() error { return rt.NewSession("") },
		"switch": func() error { return rt.SwitchSession(firstPath) },
		"fork":   func() error { _, err := rt.ForkSession(points[0].EntryID); return err },
		"clone":  rt.CloneSession,
		"record": func() error { return rt.RecordBash("true", BashResult{}) },
	} {
		if err := f(); !errors.Is(err, agent.ErrBusy) {
			t.Errorf("%s while running: %v, want ErrBusy", name, err)
		}
	}
	close(bp.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Fork at the second prompt: the new session holds the first exchange
	// and names the old file.
	text, err := rt.ForkSession(points[1].EntryID)
	if err != nil || text != "second" {
		t.Fatalf("fork = %q, %v", text, err)
	}
	forked := rt.Session()
	if forked.ID() == firstID || forked.Header().ParentSession != firstPath || len(forked.Context()) != 2 {
		t.Fatalf("forked session %+v with %d messages", forked.Header(), len(forked.Context()))
	}
	if _, err := rt.ForkSession("nope"); !errors.Is(err, ErrNotUserMessage) {
		t.Fatalf("fork at an unknown entry: %v", err)
	}
	// The first file is closed and unlocked: switching back by id prefix
	// works; switching to the session we are in does nothing.
	if err := rt.SwitchSession(firstID[:13]); err != nil {
		t.Fatal(err)
	}
	if rt.Session().ID() != firstID || !rt.SessionResumed() {
		t.Fatalf("switched to %s", rt.Session().ID())
	}
	if err := rt.SwitchSession(firstPath); err != nil {
		t.Fatal(err)
	}
	if err := rt.CloneSession(); err != nil {
		t.Fatal(err)
	}
	// (the first session holds the busy agent's exchange too)
	if c := rt.Session(); c.ID() == firstID || len(c.Context()) != 6 {
		t.Fatalf("clone %s has %d messages", c.ID(), len(c.Context()))
	}
	if err := rt.NewSession(firstPath); err != nil {
		t.Fatal(err)
	}
	if n := rt.Session(); len(n.Context()) != 0 || n.Header().ParentSession != firstPath {
		t.Fatalf("new session %+v", n.Header())
	}
	if err := rt.SwitchSession(filepath.Join(sessDir, "missing.jsonl")); err == nil {
		t.Fatal("switched to a missing file")
	}
}

// A prompt the provider refused is not left in the session: resuming it
// sends no two user messages in a row.
func TestFailedPromptLeavesSession(t *testing.T) {
	dir, home, sessDir := t.TempDir(), t.TempDir(), t.TempDir()
	srv := openai.NewServer(t,
		openai.Reply{Text: "hi"},
		openai.Reply{Status: 400, ErrorMessage: "bad request"},
	)
	rt := openSessionRuntime(t, dir, home, sessDir, srv.URL, SessionOptions{})
	ag, err := rt.NewAgent(AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Prompt(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Prompt(context.Background(), "refused"); err == nil {
		t.Fatal("no error")
	}
	path := rt.Session().Path()
	rt.Close()

	srv.Add(openai.Reply{Text: "answered"})
	rt2 := openSessionRuntime(t, dir, home, sessDir, srv.URL, SessionOptions{Path: path})
	ag2, err := rt2.NewAgent(AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag2.Prompt(context.Background(), "again"); err != nil {
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

// testUI is a front end's UI that answers from a list and records what it
// was asked.
type testUI struct {
	mu      sync.Mutex
	answers []bool
	asked   []string
	notes   []string
}

func (u *testUI) Confirm(_ context.Context, title, message string) (bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.asked = append(u.asked, title+"|"+message)
	a := u.answers[0]
	u.answers = u.answers[1:]
	return a, nil
}
func (u *testUI) Select(context.Context, string, []string) (string, bool, error) {
	return "", false, nil
}
func (u *testUI) Input(context.Context, string, string) (string, bool, error) { return "", false, nil }
func (u *testUI) Notify(m string, l NotifyLevel) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.notes = append(u.notes, string(l)+":"+m)
}

// Options.UI answers the calls that permission rules ask about: yes runs
// the call, no blocks it; the question names the tool and the command.
func TestUIAsks(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, "pi.toml"), "[permissions]\ndefault = \"allow\"\n[[permissions.rules]]\ntool = \"bash\"\ndecision = \"ask\"\n")
	ui := &testUI{answers: []bool{true, false}}
	rt, err := Open(context.Background(), Options{Cwd: t.TempDir(), PIHome: home, UI: ui})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.UI() != UI(ui) {
		t.Fatal("UI() is not Options.UI")
	}
	in := json.RawMessage(`{"command":"echo ran"}`)
	r1, err := rt.CallTool(context.Background(), "bash", "c1", in, nil)
	if err != nil || r1.IsError || !strings.Contains(r1.Content[0].Text, "ran") {
		t.Fatalf("approved call: %+v, %v", r1, err)
	}
	r2, _ := rt.CallTool(context.Background(), "bash", "c2", in, nil)
	if !r2.IsError {
		t.Fatalf("declined call ran: %+v", r2)
	}
	if len(ui.asked) != 2 || !strings.HasPrefix(ui.asked[0], "Allow bash?|") || !strings.HasSuffix(ui.asked[0], "$ echo ran") {
		t.Fatalf("asked %q", ui.asked)
	}
	// Without a UI, the headless one declines and logs.
	rt2, err := Open(context.Background(), Options{Cwd: t.TempDir(), PIHome: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	if ok, _ := rt2.UI().Confirm(context.Background(), "t", "m"); ok {
		t.Fatal("the headless UI said yes")
	}
}

// SetModel changes the model of the next agent on the same endpoint and
// refuses another provider.
func TestSetModel(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Text: "ok"})
	rt := openSessionRuntime(t, t.TempDir(), t.TempDir(), t.TempDir(), srv.URL, SessionOptions{})
	m, err := rt.Model()
	if err != nil || m.ID != "m" || m.Provider != "127.0.0.1" || m.API != "openai-completions" {
		t.Fatalf("model %+v, %v", m, err)
	}
	if err := rt.SetModel("anthropic", "claude"); err == nil || !strings.Contains(err.Error(), "model not found: anthropic/claude") {
		t.Fatalf("another provider: %v", err)
	}
	if err := rt.SetModel(m.Provider, "bigger"); err != nil {
		t.Fatal(err)
	}
	ag, err := rt.NewAgent(AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Prompt(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0]["model"]; got != "bigger" {
		t.Fatalf("request model %v", got)
	}
	if p, name := rt.Session().Model(); name != "bigger" {
		t.Fatalf("session model %s/%s", p, name)
	}
	st := rt.SessionStats()
	if st.UserMessages != 1 || st.AssistantMessages != 1 || st.ContextUsage == nil || st.ContextUsage.ContextWindow == 0 {
		t.Fatalf("stats %+v", st)
	}
	// A scripted model cannot be changed.
	if _, err := rt.NewAgent(AgentOptions{Provider: llm.NewScripted(llm.Script{}), ModelName: "script"}); err != nil {
		t.Fatal(err)
	}
	if err := rt.SetModel("", "x"); err == nil {
		t.Fatal("changed a scripted model")
	}
}
