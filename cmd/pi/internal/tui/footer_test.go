package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/pi-go/pi/runtime/llm"
)

// git runs git in dir with a fixed identity and no user configuration.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestGitBranch reads real repositories made by git: a branch, from a
// sub-folder, a branch name with a slash, a detached HEAD (its short
// hash), a linked worktree (a .git file), and no repository.
func TestGitBranch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q")
	if got := gitBranch(sub); got != "main" {
		t.Errorf("new repository: branch %q, want main", got)
	}
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "one")
	git(t, repo, "checkout", "-q", "-b", "feature/footer")
	if got := gitBranch(repo); got != "feature/footer" {
		t.Errorf("branch %q, want feature/footer", got)
	}
	git(t, repo, "checkout", "-q", "--detach")
	hash := git(t, repo, "rev-parse", "HEAD")
	if got := gitBranch(sub); got != hash[:7] {
		t.Errorf("detached HEAD: %q, want %q", got, hash[:7])
	}
	wt := filepath.Join(root, "wt")
	git(t, repo, "worktree", "add", "-q", "-b", "side", wt)
	if st, err := os.Stat(filepath.Join(wt, ".git")); err != nil || st.IsDir() {
		t.Fatalf("the worktree's .git is not a file: %v", err)
	}
	if got := gitBranch(wt); got != "side" {
		t.Errorf("worktree: branch %q, want side", got)
	}
	if got := gitBranch(filepath.Join(root)); got != "" && exec.Command("git", "-C", root, "rev-parse").Run() != nil {
		t.Errorf("outside a repository: branch %q", got)
	}
}

// TestFooterLayout: the folder with ~ for home, the branch and the name;
// the tokens, the context share and the model at the right edge; at a
// narrow width the leading folders go first and no line is wider than the
// terminal.
func TestFooterLayout(t *testing.T) {
	st := newStylesWith(profileRenderer(termenv.Ascii))
	f := Footer{Cwd: "/home/ann/src/project/deep/folder", Home: "/home/ann", Branch: "main", Session: "fix-add",
		Model: "gpt-test", Input: 12345, Output: 678, ContextTokens: 1234, ContextWindow: 128000}
	out := f.render(st, 100, "working… (Esc cancels)")
	ls := strings.Split(out, "\n")
	if len(ls) != 2 {
		t.Fatalf("footer has %d lines:\n%s", len(ls), out)
	}
	if ls[0] != "~/src/project/deep/folder (main) • fix-add" {
		t.Errorf("first line %q", ls[0])
	}
	wantLeft := "↑12.3k ↓678 · ctx 1.2k/128k (1.0%) · working… (Esc cancels)"
	if !strings.HasPrefix(ls[1], wantLeft) || !strings.HasSuffix(ls[1], " gpt-test") || ansi.StringWidth(ls[1]) != 99 {
		t.Errorf("second line %q (width %d), want %q … gpt-test at column 99", ls[1], ansi.StringWidth(ls[1]), wantLeft)
	}

	narrow := f.render(st, 34, "")
	ls = strings.Split(narrow, "\n")
	if ls[0] != "…/deep/folder (main) • fix-add" {
		t.Errorf("narrow first line %q", ls[0])
	}
	for _, l := range ls {
		if w := ansi.StringWidth(l); w > 33 {
			t.Errorf("line %q is %d columns wide in 34", l, w)
		}
	}

	// The session's cost after the tokens, the thinking level after the
	// model.
	f.Cost, f.Thinking = 0.01234, "high"
	ls = strings.Split(f.render(st, 100, ""), "\n")
	if !strings.HasPrefix(ls[1], "↑12.3k ↓678 $0.012 · ctx") || !strings.HasSuffix(ls[1], " gpt-test • high") {
		t.Errorf("with cost and thinking: %q", ls[1])
	}

	// Nothing used yet, no window known, outside home and any repository.
	f = Footer{Cwd: "/srv/x", Home: "/home/ann", Model: "m", ContextTokens: 90}
	ls = strings.Split(f.render(st, 60, ""), "\n")
	if ls[0] != "/srv/x" || !strings.HasPrefix(ls[1], "ctx 90 ") || !strings.HasSuffix(ls[1], " m") {
		t.Errorf("bare footer %q", ls)
	}

	// The share is yellow over 70% and red over 90%.
	col := newStylesWith(profileRenderer(termenv.ANSI256))
	f = Footer{Cwd: "/x", Model: "m", ContextTokens: 95, ContextWindow: 100}
	if out := f.render(col, 80, ""); !strings.Contains(out, col.fail.Render("ctx 95/100 (95.0%)")) {
		t.Errorf("95%% is not red: %q", out)
	}
	f.ContextTokens = 75
	if out := f.render(col, 80, ""); !strings.Contains(out, col.warn.Render("ctx 75/100 (75.0%)")) {
		t.Errorf("75%% is not yellow: %q", out)
	}

	// The mode: the sandbox's, or plan mode in yellow.
	f = Footer{Cwd: "/x", Model: "m", ContextTokens: 5, Mode: "sandbox workspace-write"}
	if ls := strings.Split(f.render(st, 80, ""), "\n"); !strings.HasPrefix(ls[1], "ctx 5  ") || !strings.HasSuffix(ls[1], " sandbox workspace-write · m") {
		t.Errorf("mode %q", ls[1])
	}
	f.Mode = "plan mode"
	if out := f.render(col, 80, ""); !strings.Contains(out, col.warn.Render("plan mode · ")) {
		t.Errorf("plan mode is not yellow: %q", out)
	}
}

// TestFooterInTUI: the footer of a running TUI shows the folder, the
// session's tokens as the model reports them, summed over the answers,
// and the session's name once it has one.
func TestFooterInTUI(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{
		{Text: "one", Usage: &llm.Usage{InputTokens: 1500, OutputTokens: 20, TotalTokens: 1520}},
		{Text: "two", Usage: &llm.Usage{InputTokens: 1600, OutputTokens: 30, TotalTokens: 1630}},
	}})
	tt.waitFor(filepath.Base(tt.dir))
	// The footer's sums show at the answer's end, before the run's: wait
	// for the idle footer (no "· working…" after the percentage), or the
	// next prompt is queued to a run that is ending.
	tt.typ("first", keyEnter)
	tt.waitFor("↑1.5k ↓20 · ctx 1.5k/128k (1.2%)  ")
	tt.typ("second", keyEnter)
	tt.waitFor("↑3.1k ↓50 · ctx 1.6k/128k (1.3%)  ")
	tt.typ("/name footer-name", keyEnter)
	tt.waitFor(filepath.Base(tt.dir) + " • footer-name")
	tt.exit()
}
