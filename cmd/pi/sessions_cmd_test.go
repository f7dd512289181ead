package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/session"
)

// writeLabelledSession writes a session of dir's folder under home: a
// question, an answer labelled "good point", a second answer on a branch
// of its own, then a branch summary.
func writeLabelledSession(t *testing.T, home, dir string) *session.Session {
	t.Helper()
	s, err := session.Create(session.CreateOptions{Cwd: dir, Dir: session.DirFor(session.DefaultDir(home), dir)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	must := func(_ string, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.AppendMessage(session.Message{Role: session.RoleUser, Content: []session.Block{{Type: "text", Text: "what is 2+2?"}}}))
	answer, err := s.AppendMessage(session.Message{Role: session.RoleAssistant, StopReason: "stop", Content: []session.Block{{Type: "text", Text: "4"}}})
	must(answer, err)
	must(s.AppendLabel(answer, "good point"))
	must(s.AppendMessage(session.Message{Role: session.RoleUser, Content: []session.Block{{Type: "text", Text: "and 3+3?"}}}))
	must(s.AppendMessage(session.Message{Role: session.RoleAssistant, StopReason: "stop", Content: []session.Block{{Type: "text", Text: "6"}}}))
	must(s.AppendBranchSummary(answer, "tried 3+3", nil))
	return s
}

// pi sessions show prints the header and the tree with the label, both
// branches, the branch summary and the leaf; export writes the file's
// bytes (JSONL) or the page (--html, -o); delete asks for --yes without a
// terminal, then removes the file and its checkpoints.
func TestSessionsShowExportDelete(t *testing.T) {
	home := isolate(t)
	dir := t.TempDir()
	s := writeLabelledSession(t, home, dir)
	id := s.ID()[:8]
	pi := func(stdin string, args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := run(append(args, "--cwd", dir), strings.NewReader(stdin), &out, &errb)
		return out.String(), errb.String(), code
	}
	out, errText, code := pi("", "sessions", "show", id)
	if code != 0 {
		t.Fatalf("show: %d %s", code, errText)
	}
	for _, want := range []string{"id           " + s.ID(), "[good point] assistant: 4", "├─ ", "user: and 3+3?", "└─ ", "[branch summary] tried 3+3  ← current"} {
		if !strings.Contains(out, want) {
			t.Fatalf("show lacks %q:\n%s", want, out)
		}
	}
	out, _, code = pi("", "sessions", "export", id)
	file, _ := os.ReadFile(s.Path())
	if code != 0 || out != string(file) {
		t.Fatalf("export: %d, not the file's bytes:\n%s", code, out)
	}
	page := filepath.Join(t.TempDir(), "s.html")
	if _, e, code := pi("", "sessions", "export", id, "--html", "-o", page); code != 0 {
		t.Fatalf("export --html: %d %s", code, e)
	}
	if b, _ := os.ReadFile(page); !strings.Contains(string(b), "good point") || !strings.Contains(string(b), "Content-Security-Policy") {
		t.Fatalf("the page: %.300s", b)
	}
	if _, e, code := pi("", "sessions", "show", id, "--yes"); code != exitUsage || !strings.Contains(e, "--yes is delete's flag") {
		t.Fatalf("show --yes: %d %s", code, e)
	}
	checkpoints := strings.TrimSuffix(s.Path(), ".jsonl") + ".checkpoints"
	os.MkdirAll(filepath.Join(checkpoints, "objects"), 0o700)
	s.Close()
	if _, e, code := pi("y\n", "sessions", "delete", id); code != exitUsage || !strings.Contains(e, "add --yes") {
		t.Fatalf("delete without a terminal: %d %s", code, e)
	}
	if _, err := os.Stat(s.Path()); err != nil {
		t.Fatal("the session went without --yes")
	}
	if out, e, code := pi("", "sessions", "delete", id, "--yes"); code != 0 || !strings.Contains(out, "deleted") {
		t.Fatalf("delete --yes: %d %s %s", code, out, e)
	}
	for _, p := range []string{s.Path(), checkpoints} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s is still there: %v", p, err)
		}
	}
	if _, e, code := pi("", "sessions", "show", id); code != exitError || !strings.Contains(e, "pi sessions show:") {
		t.Fatalf("show of a deleted session: %d %s", code, e)
	}
}
