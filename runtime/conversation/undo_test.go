package conversation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	openaitest "github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/checkpoint"
)

// tree is every file, link and directory under dir (not .git) with its
// mode and content, for byte-for-byte comparisons.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".git" {
			return fs.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			v += " " + string(b)
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		var diff []string
		for k, v := range want {
			if got[k] != v {
				diff = append(diff, fmt.Sprintf("%s: got %q, want %q", k, got[k], v))
			}
		}
		for k, v := range got {
			if _, ok := want[k]; !ok {
				diff = append(diff, fmt.Sprintf("%s: got %q, want none", k, v))
			}
		}
		sort.Strings(diff)
		t.Fatalf("%s:\n%s", what, strings.Join(diff, "\n"))
	}
}

// A turn that creates, modifies, deletes, renames and chmods files with
// real bash, then writes and edits with the tools, is undone byte for
// byte (files, modes, a new directory), leaving ignored build output
// alone; the conversation goes back to before its prompt; /redo brings
// the turn back; a file the person changed since makes /undo refuse
// (nothing changes) unless forced.
func TestUndoRedoRealFiles(t *testing.T) {
	dir, home := project.New(t)
	project.Write(t, filepath.Join(dir, ".gitignore"), "build/\n")
	project.Write(t, filepath.Join(dir, "a.txt"), "A\n")
	project.Write(t, filepath.Join(dir, "b.txt"), "B\n")
	project.Write(t, filepath.Join(dir, "old.txt"), "O\n")
	project.Write(t, filepath.Join(dir, "script.sh"), "#!/bin/sh\necho hi\n")
	os.Symlink("a.txt", filepath.Join(dir, "link"))
	os.Mkdir(filepath.Join(dir, "build"), 0o755)
	project.Write(t, filepath.Join(dir, "build", "out.bin"), "old build\n")
	call := func(name, args string) openaitest.ToolCall { return openaitest.ToolCall{Name: name, Arguments: args} }
	srv := openaitest.NewServer(t,
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{call("bash", `{"command":"echo new > c.txt && echo more >> a.txt && rm b.txt && mv old.txt renamed.txt && chmod 755 script.sh && mkdir -p sub/deep && echo s > sub/deep/s.txt && ln -sfn b-gone link && echo built > build/out.bin"}`)}},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{call("write", `{"path":"w.txt","content":"written\n"}`), call("edit", `{"path":"script.sh","edits":[{"oldText":"echo hi","newText":"echo edited"}]}`)}},
		openaitest.Reply{Text: "changed"},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{call("bash", `{"command":"echo two > t2.txt && rm c.txt"}`)}},
		openaitest.Reply{Text: "second"},
		openaitest.Reply{Text: "after undo"},
	)
	c := openSession(t, dir, home, t.TempDir(), srv.URL, SessionOptions{}, Options{})
	s0 := tree(t, dir)
	if _, err := submit(t, c, "change things"); err != nil {
		t.Fatal(err)
	}
	s1 := tree(t, dir)
	if s1["c.txt"] == "" || s1["b.txt"] != "" || s1["renamed.txt"] == "" || !strings.HasPrefix(s1["script.sh"], "-rwxr-xr-x") || s1["w.txt"] == "" || s1["sub/deep/s.txt"] == "" {
		t.Fatalf("the turn did not change what it should: %v", s1)
	}
	if _, err := submit(t, c, "second"); err != nil {
		t.Fatal(err)
	}
	turns, err := c.Turns()
	if err != nil || len(turns) != 2 {
		t.Fatalf("turns %+v %v", turns, err)
	}
	kinds := map[string]string{}
	for _, f := range turns[0].Files {
		kinds[f.Path] = f.Kind
	}
	if want := map[string]string{"a.txt": "modified", "b.txt": "deleted", "c.txt": "created", "old.txt": "deleted", "renamed.txt": "created", "script.sh": "modified", "sub": "created", "sub/deep": "created", "sub/deep/s.txt": "created", "w.txt": "created", "link": "modified"}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("turn 1 changed %v", kinds)
	}
	var shown []string
	run := func(line string) error {
		_, err := c.Submit(context.Background(), Prompt{Text: line}, SubmitOptions{Builtins: true, Show: func(s string) { shown = append(shown, s) }})
		return err
	}
	if err := run("/undo"); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "after undoing turn 2", tree(t, dir), s1)
	if err := run("/undo"); err != nil {
		t.Fatal(err)
	}
	want := s0
	want["build/out.bin"] = s1["build/out.bin"] // ignored: not recorded, not restored
	sameTree(t, "after undoing turn 1", tree(t, dir), want)
	if err := run("/undo"); !errors.Is(err, ErrNothingToUndo) {
		t.Fatalf("a third undo: %v", err)
	}
	if err := run("/redo"); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "after redoing turn 1", tree(t, dir), s1)
	if !strings.Contains(shown[len(shown)-1], "redid turn 1") {
		t.Fatalf("redo said %q", shown[len(shown)-1])
	}
	// The person changes a file the turn wrote: undo refuses, names it,
	// and changes nothing.
	project.Write(t, filepath.Join(dir, "w.txt"), "mine\n")
	mine := tree(t, dir)
	err = run("/undo")
	var conflict *checkpoint.ConflictError
	if !errors.As(err, &conflict) || !reflect.DeepEqual(conflict.Paths, []string{"w.txt"}) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("undo over a changed file: %v", err)
	}
	sameTree(t, "after the refused undo", tree(t, dir), mine)
	if _, err := c.Undo(context.Background(), UndoOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "after the forced undo", tree(t, dir), want)
	// The conversation went back to before the first prompt.
	if _, err := submit(t, c, "fresh"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if got := wireTexts(reqs[len(reqs)-1])[1:]; !reflect.DeepEqual(got, []string{"user: fresh"}) {
		t.Fatalf("after the undo the model got %q", got)
	}
}

// /rewind lists the turns; rewinding the conversation only keeps the
// files; the files only keeps the conversation.
func TestRewindModes(t *testing.T) {
	dir, home := project.New(t)
	srv := openaitest.NewServer(t,
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "write", Arguments: `{"path":"one.txt","content":"1"}`}}},
		openaitest.Reply{Text: "wrote one"},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "write", Arguments: `{"path":"two.txt","content":"2"}`}}},
		openaitest.Reply{Text: "wrote two"},
	)
	c := openSession(t, dir, home, t.TempDir(), srv.URL, SessionOptions{}, Options{})
	submit(t, c, "write one")
	submit(t, c, "write two")
	var shown []string
	if _, err := c.Submit(context.Background(), Prompt{Text: "/rewind"}, SubmitOptions{Builtins: true, Show: func(s string) { shown = append(shown, s) }}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown[0], "write one") || !strings.Contains(shown[0], "created two.txt") {
		t.Fatalf("/rewind listed:\n%s", shown[0])
	}
	leaf := c.Session().Leaf()
	if _, err := c.Rewind(context.Background(), 2, RewindFiles, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "two.txt")); !os.IsNotExist(err) || c.Session().Leaf() != leaf {
		t.Fatalf("files-only rewind: two.txt %v, leaf moved %v", err, c.Session().Leaf() != leaf)
	}
	if _, err := c.Rewind(context.Background(), 1, RewindConversation, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "one.txt")); err != nil || len(c.Messages()) != 0 {
		t.Fatalf("conversation-only rewind: one.txt %v, %d messages", err, len(c.Messages()))
	}
	if _, err := c.Rewind(context.Background(), 1, "sideways", UndoOptions{}); err == nil {
		t.Fatal("a bad mode was taken")
	}
}

// The turns of a session are undone after a resume (another run, as pi
// -c does); with NoCheckpoints nothing is recorded and /undo says why.
func TestUndoAcrossResumeAndNoCheckpoints(t *testing.T) {
	dir, home := project.New(t)
	sessDir := t.TempDir()
	srv := openaitest.NewServer(t,
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "write", Arguments: `{"path":"kept.txt","content":"k"}`}}},
		openaitest.Reply{Text: "wrote"},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "write", Arguments: `{"path":"other.txt","content":"o"}`}}},
		openaitest.Reply{Text: "wrote other"},
	)
	c := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{}, Options{})
	if _, err := submit(t, c, "write it"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c.Runtime().Close()
	c2 := openSession(t, dir, home, sessDir, srv.URL, SessionOptions{Continue: true}, Options{})
	if _, err := c2.Undo(context.Background(), UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kept.txt")); !os.IsNotExist(err) {
		t.Fatalf("kept.txt after undo in the resumed run: %v", err)
	}
	c2.Close()
	c2.Runtime().Close()
	c3 := openSession(t, dir, home, t.TempDir(), srv.URL, SessionOptions{NoCheckpoints: true}, Options{})
	if _, err := submit(t, c3, "write other"); err != nil {
		t.Fatal(err)
	}
	if _, err := c3.Undo(context.Background(), UndoOptions{}); err == nil || !strings.Contains(err.Error(), "not recorded") {
		t.Fatalf("undo without checkpoints: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "other.txt")); err != nil {
		t.Fatal(err)
	}
}

// After /undo the tree marks the entry the conversation went back to, not
// pi's own pi.undo entry, which has no line.
func TestTreeAfterUndo(t *testing.T) {
	dir, home := project.New(t)
	srv := openaitest.NewServer(t, openaitest.Reply{Text: "one"}, openaitest.Reply{Text: "two"})
	c := openSession(t, dir, home, t.TempDir(), srv.URL, SessionOptions{}, Options{})
	submit(t, c, "q1")
	first := c.Session().Leaf()
	submit(t, c, "q2")
	if _, err := c.Undo(context.Background(), UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	text := FormatTree(TreeLines(c.Session()), 0)
	if strings.Contains(text, UndoType) || !strings.Contains(text, first+" assistant: one  ← current") {
		t.Fatalf("tree after undo:\n%s", text)
	}
}

// pi.toml's [checkpoints] applies: max_file_mb leaves a bigger file out of
// the snapshot (the undo says it could not restore it), enabled = false
// records nothing.
func TestCheckpointsFromPiToml(t *testing.T) {
	dir, home := project.New(t)
	big := strings.Repeat("b", 1<<20+1)
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pi.toml"), []byte("[checkpoints]\nmax_file_mb = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := openaitest.NewServer(t,
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{Name: "write", Arguments: `{"path":"big.txt","content":"new big"}`},
			{Name: "write", Arguments: `{"path":"small.txt","content":"new small"}`},
		}},
		openaitest.Reply{Text: "wrote"},
	)
	c := openSession(t, dir, home, t.TempDir(), srv.URL, SessionOptions{}, Options{})
	if _, err := submit(t, c, "write them"); err != nil {
		t.Fatal(err)
	}
	res, err := c.Undo(context.Background(), UndoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "small.txt")); string(b) != "s" {
		t.Errorf("small.txt after undo: %q", b)
	}
	if _, ok := res.NotRestored["big.txt"]; !ok {
		t.Errorf("big.txt (over max_file_mb) was not reported as not restored: %+v", res)
	}
	c.Close()
	c.Runtime().Close()

	if err := os.WriteFile(filepath.Join(dir, "pi.toml"), []byte("[checkpoints]\nenabled = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Add(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "write", Arguments: `{"path":"small.txt","content":"again"}`}}}, openaitest.Reply{Text: "wrote"})
	c2 := openSession(t, dir, home, t.TempDir(), srv.URL, SessionOptions{}, Options{})
	if _, err := submit(t, c2, "write again"); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Undo(context.Background(), UndoOptions{}); err == nil || !strings.Contains(err.Error(), "not recorded") {
		t.Fatalf("undo with [checkpoints] enabled = false: %v", err)
	}
}
