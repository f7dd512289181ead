package conversation

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
)

// A built-in command typed while a run an extension asked for goes on
// (here the model never answers) is not refused with "abort it first":
// it runs once that run ends (here, aborted).
func TestBuiltinWaitsForExtensionRun(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Text: "never sent", StallAfter: 1})
	dir, home := project.New(t)
	a := plugin.BuildGo(t, "extensions/testdata/guests/conv12/a")
	project.Write(t, filepath.Join(dir, "pi.toml"), project.Extension(t, "conv12", a))
	models := `{"providers": {"local": {"baseUrl": "` + srv.URL + `", "api": "openai-completions", "apiKey": "k", "models": [{"id": "m"}]}}}`
	if err := os.WriteFile(filepath.Join(home, "models.json"), []byte(models), 0o600); err != nil {
		t.Fatal(err)
	}
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true, Mode: app.ModeInteractive, Model: app.ModelOptions{Provider: "local", Name: "m"}})
	started := make(chan struct{})
	c := open(t, rt, Options{Session: &SessionOptions{Dir: t.TempDir()}, OnEvent: func(ev agent.Event) {
		if ev.Type == agent.EventAgentStart {
			close(started)
		}
	}})
	first := c.Session().ID()
	if _, err := c.Submit(context.Background(), Prompt{Text: "/conv12-typed send from the extension"}, SubmitOptions{Interactive: true}); err != nil {
		t.Fatal(err)
	}
	<-started
	accepted, done := make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := c.Submit(context.Background(), Prompt{Text: "/new"}, SubmitOptions{Interactive: true, Builtins: true, Accepted: func() { close(accepted) }})
		done <- err
	}()
	<-accepted
	c.Abort()
	if err := <-done; err != nil {
		t.Fatalf("/new during an extension's run: %v", err)
	}
	if c.Session().ID() == first {
		t.Error("/new did not start a new session")
	}
}
