package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// linkFixture is a project (real path) with .env, an absolute protected
// folder outside it, and a file there; hard links are made by the tests.
func linkFixture(t *testing.T) (root, outside string) {
	t.Helper()
	var err error
	if root, err = filepath.EvalSymlinks(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if outside, err = filepath.EvalSymlinks(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(root, ".env"), filepath.Join(root, "src", "main.go"), filepath.Join(outside, "vault", "key"), filepath.Join(outside, "loose", ".env")} {
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func link(t *testing.T, old, new string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(new), 0o755)
	if err := os.Link(old, new); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
}

// TestHardLinksOfProtectedFiles: a path whose file is also a protected
// path (same device and inode) is refused as that path is, wherever the
// walk can find the other link: in the project, under an absolute rule's
// folder, in the file's own folder; the reason names both. An unrelated
// file with several links is not refused.
func TestHardLinksOfProtectedFiles(t *testing.T) {
	root, outside := linkFixture(t)
	link(t, filepath.Join(root, ".env"), filepath.Join(root, "docs", "notes.txt"))
	link(t, filepath.Join(outside, "vault", "key"), filepath.Join(root, "src", "data.bin"))
	link(t, filepath.Join(outside, "loose", ".env"), filepath.Join(outside, "loose", "copy.txt"))
	link(t, filepath.Join(root, "src", "main.go"), filepath.Join(root, "src", "main2.go"))
	p := mustPolicy(t, []Rule{
		{Tool: "*", Path: []string{".env*", "/" + strings.TrimPrefix(outside, "/") + "/vault/**"}, Decision: Deny, Reason: "secrets"},
	}, Options{Root: root, Cwd: root})
	for _, c := range []struct {
		tool, path string
		want       Decision
		why        string
	}{
		{"read", filepath.Join(root, "docs", "notes.txt"), Deny, "docs/notes.txt is a hard link of .env"},
		{"edit", filepath.Join(root, "docs", "notes.txt"), Deny, "hard link"},
		{"read", filepath.Join(root, "src", "data.bin"), Deny, "src/data.bin is a hard link of " + filepath.Join(outside, "vault", "key")},
		{"read", filepath.Join(outside, "loose", "copy.txt"), Deny, "is a hard link of " + filepath.Join(outside, "loose", ".env")},
		{"read", filepath.Join(root, "src", "main2.go"), Allow, ""},
		{"read", filepath.Join(root, "src", "main.go"), Allow, ""},
	} {
		in, _ := json.Marshal(map[string]string{"path": c.path})
		got := p.Check(c.tool, in, []string{c.path})
		if got.Decision != c.want || !strings.Contains(got.Reason, c.why) {
			t.Errorf("%s %s = %s (%s), want %s with %q", c.tool, c.path, got.Decision, got.Reason, c.want, c.why)
		}
	}
	// A bash redirection through the link is refused too.
	in, _ := json.Marshal(map[string]string{"command": "cat < docs/notes.txt"})
	if got := p.Check("bash", in, nil); got.Decision != Deny {
		t.Errorf("bash < link = %s (%s)", got.Decision, got.Reason)
	}
}

// TestHardLinkSearchBounded: when the walk stops at MaxLinkWalk before it
// found every link of the file, pi cannot clear it, and a deny rule
// matches (fail closed) saying why; once the bound is large enough, the
// same file is allowed.
func TestHardLinkSearchBounded(t *testing.T) {
	root, _ := linkFixture(t)
	for i := range 50 {
		os.WriteFile(filepath.Join(root, "src", strings.Repeat("f", i+1)), nil, 0o644)
	}
	link(t, filepath.Join(root, "src", "main.go"), filepath.Join(root, "zz", "main.go"))
	p := mustPolicy(t, []Rule{{Tool: "*", Path: []string{".env"}, Decision: Deny}}, Options{Root: root, Cwd: root})
	file := filepath.Join(root, "zz", "main.go")
	in, _ := json.Marshal(map[string]string{"path": file})
	old := MaxLinkWalk
	defer func() { MaxLinkWalk = old }()
	MaxLinkWalk = 10
	if got := p.Check("read", in, []string{file}); got.Decision != Deny || !strings.Contains(got.Reason, "zz/main.go has 2 hard links and pi stopped looking for them after 10 entries") {
		t.Errorf("bounded walk = %s (%s)", got.Decision, got.Reason)
	}
	MaxLinkWalk = old
	if got := p.Check("read", in, []string{file}); got.Decision != Allow {
		t.Errorf("whole walk = %s (%s)", got.Decision, got.Reason)
	}
}

// TestFileFilter: what grep, find and ls leave out is what a read would be
// refused, or asked about: by name, by folder, by symlink, by hard link,
// by the tool's own rules; allow rules and command rules never hide; no
// filter at all when no rule could hide anything.
func TestFileFilter(t *testing.T) {
	root, _ := linkFixture(t)
	for _, f := range []string{"secrets/db.txt", "vendor/lib.go", "docs/a.md", "ask/me.txt"} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
		os.WriteFile(filepath.Join(root, f), nil, 0o644)
	}
	link(t, filepath.Join(root, ".env"), filepath.Join(root, "docs", "hard.txt"))
	os.Symlink("../.env", filepath.Join(root, "docs", "soft.txt"))
	p := mustPolicy(t, []Rule{
		{Tool: "read", Path: []string{".env", "secrets"}, Decision: Deny},
		{Tool: "grep", Path: []string{"vendor"}, Decision: Deny},
		{Tool: "*", Path: []string{"ask"}, Decision: Ask},
		{Tool: "*", Path: []string{"docs/**"}, Decision: Allow},
		{Tool: "bash", Command: []string{"cat"}, Decision: Deny},
	}, Options{Root: root, Cwd: root})
	grep := p.FileFilter("grep")
	find := p.FileFilter("find")
	for _, c := range []struct {
		path       string
		grep, find bool
	}{
		{".env", true, true},
		{"secrets", true, true},
		{"secrets/db.txt", true, true},
		{"docs/hard.txt", true, true},
		{"docs/soft.txt", true, true},
		{"vendor", true, false},
		{"vendor/lib.go", true, false},
		{"ask/me.txt", true, true},
		{"docs/a.md", false, false},
		{"src/main.go", false, false},
	} {
		abs := filepath.Join(root, c.path)
		if got := grep.Hides(abs); got != c.grep {
			t.Errorf("grep hides %s = %v", c.path, got)
		}
		if got := find.Hides(abs); got != c.find {
			t.Errorf("find hides %s = %v", c.path, got)
		}
	}
	none := mustPolicy(t, []Rule{
		{Tool: "*", Path: []string{"docs/**"}, Decision: Allow},
		{Tool: "write", Path: []string{".env"}, Decision: Deny},
		{Tool: "bash", Command: []string{"cat"}, Decision: Deny},
	}, Options{Root: root, Cwd: root})
	if f := none.FileFilter("grep"); f != nil {
		t.Error("a filter without any rule that could hide a read")
	}
}
