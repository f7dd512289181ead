package app

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/openaitest"
	"github.com/pi-go/pi/runtime/session"
)

// TestSessionNameRules: a name is one line, not empty, bounded, and
// written with the key redacted.
func TestSessionNameRules(t *testing.T) {
	srv := openaitest.NewServer(t)
	dir, home := t.TempDir(), t.TempDir()
	rt := openSessionRuntime(t, dir, home, t.TempDir(), srv.URL, SessionOptions{})
	for _, bad := range []string{"", "   ", "two\nlines", "cr\rline", strings.Repeat("x", MaxSessionNameLen+1)} {
		if err := rt.SetSessionName(bad); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	if err := rt.SetSessionName("  work on sk-test-key-0123456789  "); err != nil {
		t.Fatal(err)
	}
	if got := rt.SessionName(); strings.Contains(got, "sk-test-key") || !strings.HasPrefix(got, "work on ") {
		t.Fatalf("name %q: the key must be redacted and the name trimmed", got)
	}
}

// TestSwitchSessions: new, fork and resume move the runtime between
// session files; the agent built after a switch goes on from the switched-to
// conversation.
func TestSwitchSessions(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "first answer"}, openaitest.Reply{Text: "in the fork"}, openaitest.Reply{Text: "back"})
	dir, home, sessDir := t.TempDir(), t.TempDir(), t.TempDir()
	rt := openSessionRuntime(t, dir, home, sessDir, srv.URL, SessionOptions{})
	if err := rt.ForkSession(); err == nil {
		t.Fatal("fork of an empty session accepted")
	}
	ag, err := rt.NewAgent(AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Prompt(context.Background(), "remember 42"); err != nil {
		t.Fatal(err)
	}
	first := rt.Session().Path()
	if err := rt.ForkSession(); err != nil {
		t.Fatal(err)
	}
	fork := rt.Session().Path()
	if fork == first || rt.Session().Header().ParentSession == "" {
		t.Fatalf("fork %s of %s, parent %q", fork, first, rt.Session().Header().ParentSession)
	}
	if ag, err = rt.NewAgent(AgentOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Prompt(context.Background(), "and in the fork?"); err != nil {
		t.Fatal(err)
	}
	if got := wireTexts(srv.Requests()[1]); len(got) < 3 || !strings.Contains(strings.Join(got, "|"), "remember 42") {
		t.Fatalf("the fork's first request lacks the earlier conversation: %q", got)
	}
	if err := rt.ResumeSession(fork); err == nil || !strings.Contains(err.Error(), "current session") {
		t.Fatalf("resume of the current session: %v", err)
	}
	if err := rt.ResumeSession("no-such-session-id"); err == nil {
		t.Fatal("resume of a missing session accepted")
	}
	if rt.Session().Path() != fork {
		t.Fatal("a failed resume changed the session")
	}
	if err := rt.ResumeSession(first); err != nil {
		t.Fatal(err)
	}
	if !rt.SessionResumed() || rt.Session().Path() != first {
		t.Fatalf("resumed %s, want %s", rt.Session().Path(), first)
	}
	// The fork's file is closed: another runtime may open it.
	other, err := session.Open(fork, session.OpenOptions{})
	if err != nil {
		t.Fatalf("the fork stayed locked after switching away: %v", err)
	}
	other.Close()
	if err := rt.NewSession(); err != nil {
		t.Fatal(err)
	}
	if p := rt.Session().Path(); p == first || p == fork || len(rt.History()) != 0 {
		t.Fatalf("new session %s has %d messages", p, len(rt.History()))
	}
	infos, err := rt.Sessions()
	if err != nil || len(infos) < 2 {
		t.Fatalf("sessions: %d, %v", len(infos), err)
	}
}

// TestNoSessionFileSwitches: with --no-session nothing is resumed or forked.
func TestNoSessionFileSwitches(t *testing.T) {
	srv := openaitest.NewServer(t)
	rt := openSessionRuntime(t, t.TempDir(), t.TempDir(), t.TempDir(), srv.URL, SessionOptions{Disabled: true})
	if err := rt.ResumeSession("x"); !errors.Is(err, ErrNoSessionFile) {
		t.Errorf("resume: %v", err)
	}
	if err := rt.ForkSession(); !errors.Is(err, ErrNoSessionFile) {
		t.Errorf("fork: %v", err)
	}
	if err := rt.NewSession(); err != nil || !rt.Session().InMemory() {
		t.Errorf("new: %v, in memory %v", err, rt.Session().InMemory())
	}
}

// TestRunBash: a person's command runs through the pipeline, is stored as a
// bashExecution message and reaches the model with the next prompt; a
// permission rule blocks it as it would block the model.
func TestRunBash(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "seen"})
	dir, home := t.TempDir(), t.TempDir()
	os.WriteFile(dir+"/pi.toml", []byte("[permissions]\n[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"rm\"]\ndecision = \"deny\"\nreason = \"keep files\"\n"), 0o644)
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Trust: true, Model: ModelOptions{Name: "m", BaseURL: srv.URL, APIKey: "sk-test-key-0123456789"}, Session: &SessionOptions{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ag, err := rt.NewAgent(AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.RunBash(context.Background(), "echo out-$((6*7)); exit 3", nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.ExitCode == nil || *run.ExitCode != 3 || !run.Result.IsError || !strings.Contains(run.Result.Text(), "out-42") {
		t.Fatalf("run %+v", run)
	}
	os.WriteFile(dir+"/keep", nil, 0o644)
	blocked, err := rt.RunBash(context.Background(), "rm keep", nil)
	if err != nil || !strings.Contains(blocked.Result.Text(), "keep files") {
		t.Fatalf("rm: %v %q", err, blocked.Result.Text())
	}
	if _, err := os.Stat(dir + "/keep"); err != nil {
		t.Fatal("a denied !rm ran")
	}
	if _, err := ag.Prompt(context.Background(), "what happened?"); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(wireTexts(srv.Requests()[0]), "|")
	if !strings.Contains(joined, "Ran `echo out-$((6*7)); exit 3`") || !strings.Contains(joined, "Command exited with code 3") {
		t.Fatalf("request lacks the command: %s", joined)
	}
	data, _ := os.ReadFile(rt.Session().Path())
	if !strings.Contains(string(data), `"role":"bashExecution"`) || !strings.Contains(string(data), `"exitCode":3`) {
		t.Fatalf("session lacks the bashExecution message:\n%s", data)
	}
	// The session reads back: the reference's shape round-trips.
	back, err := session.Read(rt.Session().Path(), session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(session.ToLLM(back.Context())); n != 4 {
		t.Fatalf("%d messages read back, want 4 (two commands, the prompt, the answer)", n)
	}
}
