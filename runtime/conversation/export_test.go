package conversation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openaitest "github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/session"
)

// /export FILE.jsonl writes the session file's bytes, /export FILE.html
// the page; /import copies a session file into this folder's sessions and
// goes on in it (the model is sent its conversation); a file that is no
// session is refused and nothing changes.
func TestExportImport(t *testing.T) {
	dir, home := project.New(t)
	sessDir := t.TempDir()
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "the answer"}, openaitest.Reply{Text: "after import"})
	c := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{}, Options{})
	if _, err := submit(t, c, "the question"); err != nil {
		t.Fatal(err)
	}
	var shown []string
	run := func(line string) (Submitted, error) {
		return c.Submit(context.Background(), Prompt{Text: line}, SubmitOptions{Builtins: true, Show: func(s string) { shown = append(shown, s) }})
	}
	if _, err := run("/export out.jsonl"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	want, _ := os.ReadFile(c.Session().Path())
	if string(got) != string(want) {
		t.Fatalf("exported JSONL differs from the session file:\n%s\n%s", got, want)
	}
	if _, err := run("/export"); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "pi-session-"+c.Session().ID()+".html"))
	if err != nil || !strings.Contains(string(page), "the answer") {
		t.Fatalf("default export: %v", err)
	}

	// A session written elsewhere (here: a copy under another name).
	other := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	os.WriteFile(other, want, 0o600)
	notSession := filepath.Join(dir, "notes.jsonl")
	os.WriteFile(notSession, []byte("hello\n"), 0o600)
	before := c.Session().Path()
	if _, err := run("/import " + notSession); err == nil || !strings.Contains(err.Error(), "notes.jsonl") || c.Session().Path() != before {
		t.Fatalf("importing a file that is no session: %v", err)
	}
	sub, err := run("/import " + other)
	if err != nil || !sub.Switched {
		t.Fatalf("import: %v %+v", err, sub)
	}
	if p := c.Session().Path(); p != filepath.Join(sessDir, "elsewhere.jsonl") {
		t.Fatalf("imported session is %s", p)
	}
	if _, err := submit(t, c, "go on"); err != nil {
		t.Fatal(err)
	}
	texts := wireTexts(srv.Requests()[1])
	if len(texts) != 4 || texts[1] != "user: the question" || texts[2] != "assistant: the answer" {
		t.Fatalf("after import the model got %q", texts)
	}
	back, err := session.Read(other, session.OpenOptions{})
	if err != nil || len(back.Entries()) != len(c.Session().Entries())-2 {
		t.Fatalf("the imported file's original changed: %v", err)
	}
}
