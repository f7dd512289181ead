package conversation

import (
	"context"
	"errors"
	"strings"
	"testing"

	openaitest "github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/session"
)

// Going back to the first answer with a summary writes a branch_summary
// there (the model summarized the branch left, in the reference's
// format, and its text is in the next request); the old branch stays in
// the file; the tree shows both branches, the label and the leaf.
func TestNavigateTreeWithSummary(t *testing.T) {
	dir, home := project.New(t)
	srv := openaitest.NewServer(t,
		openaitest.Reply{Text: "first answer"},
		openaitest.Reply{Text: "approach A answer"},
		openaitest.Reply{Text: "SUMMARY OF A"},
		openaitest.Reply{Text: "approach B answer"},
	)
	c := openSession(t, dir, home, t.TempDir(), srv.URL, SessionOptions{}, Options{})
	if _, err := submit(t, c, "hello"); err != nil {
		t.Fatal(err)
	}
	s := c.Session()
	firstAnswer := s.Leaf()
	if err := c.SetLabel("", "start"); err != nil {
		t.Fatal(err)
	}
	if _, err := submit(t, c, "try approach A"); err != nil {
		t.Fatal(err)
	}
	oldLeaf := s.Leaf()
	res, err := c.NavigateTree(context.Background(), firstAnswer, NavigateOptions{Summarize: true, Instructions: "the files"})
	if err != nil {
		t.Fatal(err)
	}
	if res.SummaryEntryID == "" || res.EditorText != "" {
		t.Fatalf("result %+v", res)
	}
	sum := s.Entry(res.SummaryEntryID)
	if sum.Type != session.TypeBranchSummary || sum.ParentID != firstAnswer || sum.FromID != firstAnswer ||
		!strings.HasPrefix(sum.Summary, "The user explored a different conversation branch") || !strings.Contains(sum.Summary, "SUMMARY OF A") {
		t.Fatalf("summary entry %+v", sum)
	}
	// The summarizing request saw the branch left, and the focus.
	req := strings.Join(wireTexts(srv.Requests()[2]), "\n")
	if !strings.Contains(req, "[User]: try approach A") || !strings.Contains(req, "approach A answer") || !strings.Contains(req, "Additional focus: the files") || strings.Contains(req, "[User]: hello") {
		t.Fatalf("summary request:\n%s", req)
	}
	if _, err := submit(t, c, "try approach B"); err != nil {
		t.Fatal(err)
	}
	got := wireTexts(srv.Requests()[3])[1:]
	if len(got) != 4 || got[0] != "user: hello" || got[1] != "assistant: first answer" || !strings.Contains(got[2], "SUMMARY OF A") || got[3] != "user: try approach B" {
		t.Fatalf("after the move the model got %q", got)
	}
	if s.Entry(oldLeaf) == nil {
		t.Fatal("the old branch is gone")
	}
	lines := TreeLines(s)
	text := FormatTree(lines, 0)
	for _, want := range []string{"[start] assistant: first answer", "├─ ", "└─ ", "[branch summary] SUMMARY OF A", "assistant: approach B answer  ← current"} {
		if !strings.Contains(text, want) {
			t.Fatalf("tree lacks %q:\n%s", want, text)
		}
	}
	// Choosing a user message goes on from its parent and gives its text.
	var hello string
	for _, e := range s.Entries() {
		if m := userMessage(e); m != nil && hello == "" {
			hello = e.ID
		}
	}
	res, err = c.NavigateTree(context.Background(), hello, NavigateOptions{})
	if err != nil || res.EditorText != "hello" || res.Leaf != s.Entry(hello).ParentID || s.Leaf() != res.Leaf {
		t.Fatalf("navigate to the root: %+v %v (leaf %q)", res, err, s.Leaf())
	}
	if _, err := c.NavigateTree(context.Background(), "nope", NavigateOptions{}); !errors.Is(err, session.ErrNoEntry) {
		t.Fatalf("unknown entry: %v", err)
	}
	// The session read back has the same tree.
	back, err := session.Read(s.Path(), session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if back.Labels()[firstAnswer] != "start" {
		t.Fatalf("labels read back %v", back.Labels())
	}
}

// /label and /tree as commands: the label shows in /tree's text; /tree ID
// moves the leaf; a label of two lines is refused.
func TestTreeCommands(t *testing.T) {
	dir, home := project.New(t)
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "one"}, openaitest.Reply{Text: "two"})
	c := openSession(t, dir, home, t.TempDir(), srv.URL, SessionOptions{}, Options{})
	submit(t, c, "q1")
	first := c.Session().Leaf()
	submit(t, c, "q2")
	var shown []string
	run := func(line string) error {
		_, err := c.Submit(context.Background(), Prompt{Text: line}, SubmitOptions{Builtins: true, Show: func(s string) { shown = append(shown, s) }})
		return err
	}
	if err := run("/label  mark  "); err != nil {
		t.Fatal(err)
	}
	if err := run("/tree " + first); err != nil {
		t.Fatal(err)
	}
	if c.Session().Leaf() != first {
		t.Fatalf("leaf %s, want %s", c.Session().Leaf(), first)
	}
	if err := run("/tree"); err != nil {
		t.Fatal(err)
	}
	last := shown[len(shown)-1]
	if !strings.Contains(last, "[mark] assistant: two") || !strings.Contains(last, "assistant: one  ← current") {
		t.Fatalf("/tree showed:\n%s", last)
	}
	if err := run("/label -e " + first + " first one"); err != nil || c.Session().Labels()[first] != "first one" {
		t.Fatalf("/label -e: %v %v", err, c.Session().Labels())
	}
	if err := run("/label -e nope x"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("/label -e of an unknown entry: %v", err)
	}
	if err := c.SetLabel("", "a\nb"); err == nil {
		t.Fatal("a label of two lines was taken")
	}
}
