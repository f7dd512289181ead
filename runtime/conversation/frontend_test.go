package conversation

import (
	"context"
	"os"
	"strings"
	"testing"

	openaitest "github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/session"
)

// TestSessionNameRules: a name is one line, not empty, bounded, and
// written with the key redacted.
func TestSessionNameRules(t *testing.T) {
	srv := openaitest.NewServer(t)
	c := openSession(t, t.TempDir(), t.TempDir(), t.TempDir(), srv.URL, SessionOptions{}, Options{})
	for _, bad := range []string{"", "   ", "two\nlines", "cr\rline", strings.Repeat("x", MaxSessionNameLen+1)} {
		if err := c.SetSessionName(bad); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	if err := c.SetSessionName("  work on " + testKey + "  "); err != nil {
		t.Fatal(err)
	}
	if got := c.SessionName(); strings.Contains(got, "sk-test-key") || !strings.HasPrefix(got, "work on ") {
		t.Fatalf("name %q: the key must be redacted and the name trimmed", got)
	}
}

// TestRunShellCommand: a person's command runs through the pipeline, is
// stored as a bashExecution message and reaches the model with the next
// prompt; a permission rule blocks it as it would block the model.
func TestRunShellCommand(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "seen"})
	dir, home := t.TempDir(), t.TempDir()
	os.WriteFile(dir+"/pi.toml", []byte("[permissions]\n[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"rm\"]\ndecision = \"deny\"\nreason = \"keep files\"\n"), 0o644)
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true, Model: app.ModelOptions{Name: "m", BaseURL: srv.URL, APIKey: testKey}})
	c := open(t, rt, Options{Session: &SessionOptions{Dir: t.TempDir()}})
	run, err := c.RunShellCommand(context.Background(), "echo out-$((6*7)); exit 3", nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.ExitCode == nil || *run.ExitCode != 3 || !run.Result.IsError || !strings.Contains(run.Result.Text(), "out-42") {
		t.Fatalf("run %+v", run)
	}
	os.WriteFile(dir+"/keep", nil, 0o644)
	blocked, err := c.RunShellCommand(context.Background(), "rm keep", nil)
	if err != nil || !strings.Contains(blocked.Result.Text(), "keep files") {
		t.Fatalf("rm: %v %q", err, blocked.Result.Text())
	}
	if _, err := os.Stat(dir + "/keep"); err != nil {
		t.Fatal("a denied !rm ran")
	}
	if _, err := submit(t, c, "what happened?"); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(wireTexts(srv.Requests()[0]), "|")
	if !strings.Contains(joined, "Ran `echo out-$((6*7)); exit 3`") || !strings.Contains(joined, "Command exited with code 3") {
		t.Fatalf("request lacks the command: %s", joined)
	}
	data, _ := os.ReadFile(c.Session().Path())
	if !strings.Contains(string(data), `"role":"bashExecution"`) || !strings.Contains(string(data), `"exitCode":3`) {
		t.Fatalf("session lacks the bashExecution message:\n%s", data)
	}
	// The session reads back: the reference's shape round-trips.
	back, err := session.Read(c.Session().Path(), session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(session.ToLLM(back.Context())); n != 4 {
		t.Fatalf("%d messages read back, want 4 (two commands, the prompt, the answer)", n)
	}
}
