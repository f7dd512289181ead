// Package apptest runs an example extension in the whole assembled pi
// (runtime/app): a project whose pi.toml loads it with the grants, limits
// and config a test gives, a PI_HOME of its own (for kv stores), and a
// scripted model. The ABI 1.1 examples need it: their kv stores, tool.call,
// prompt hooks and commands live in the runtime, not in the bare host. It
// is imported only by tests.
package apptest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/llm"
)

// Project is a folder with a pi.toml that loads one extension.
type Project struct {
	// Dir is the project folder (it has .git); Home is its PI_HOME.
	Dir, Home string
}

// New makes a project whose pi.toml loads wasm as name, with extra TOML
// lines after the entry's header (its [extensions.grants], ...), and sets
// PI_HOME for the test.
func New(t testing.TB, name, wasm, extra string) Project {
	t.Helper()
	p := Project{Dir: t.TempDir(), Home: t.TempDir()}
	if err := os.Mkdir(filepath.Join(p.Dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := extensions.FileSHA256(wasm)
	if err != nil {
		t.Fatal(err)
	}
	toml := fmt.Sprintf("[[extensions]]\nname = %q\npath = %q\nsha256 = %q\n%s\n", name, wasm, sum, extra)
	p.Write(t, "pi.toml", toml)
	t.Setenv("PI_HOME", p.Home)
	t.Setenv("OPENAI_API_KEY", "")
	return p
}

// Write writes a file of the project.
func (p Project) Write(t testing.TB, name, data string) {
	t.Helper()
	path := filepath.Join(p.Dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Open assembles pi in the project (trusted for the run), closed when the
// test ends; o's Cwd, PIHome and Trust are set.
func (p Project) Open(t testing.TB, o app.Options) *app.Runtime {
	t.Helper()
	o.Cwd, o.PIHome, o.Trust = p.Dir, p.Home, true
	rt, err := app.Open(context.Background(), o)
	if err != nil {
		t.Fatalf("open pi: %v", err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// Model returns a scripted model from JSON ({"turns":[...]}, see
// llm.ParseScript).
func Model(t testing.TB, script string) *llm.Scripted {
	t.Helper()
	s, err := llm.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	return llm.NewScripted(s)
}

// Submit sends a prompt as a person would (input hooks, commands, the
// model) and returns what was shown and the outcome.
func Submit(t testing.TB, rt *app.Runtime, p *llm.Scripted, text string) ([]string, conversation.Submitted, error) {
	t.Helper()
	conv, err := conversation.New(rt, conversation.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	var shown []string
	s, err := conv.Submit(context.Background(), conversation.Prompt{Text: text}, conversation.SubmitOptions{Show: func(x string) { shown = append(shown, x) }})
	return shown, s, err
}
