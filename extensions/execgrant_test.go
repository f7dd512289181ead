package extensions_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

// execFixture is a project whose extension may read src/ and write out/,
// with a folder outside the project and symlinks that lead out of the
// grants, loaded into a real host running the standard-library sandbox
// guest.
type execFixture struct {
	root, src, out, outside string
	ts                      []tool.AgentTool
}

func newExecFixture(t *testing.T, fs, execGrants []string) *execFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &execFixture{root: filepath.Join(base, "project"), outside: filepath.Join(base, "outside")}
	f.src, f.out = filepath.Join(f.root, "src"), filepath.Join(f.root, "out")
	for _, d := range []string{f.src, f.out, f.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		filepath.Join(f.src, "escape"):  f.outside, // a folder inside a grant that leads out
		filepath.Join(f.src, "to-out"):  f.out,     // a folder inside a grant that leads to another grant
		filepath.Join(f.root, "via"):    "src",     // outside the grants, leading into one
		filepath.Join(f.src, "up-link"): "../..",   // a relative link climbing out
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	h := newHost(t, extensions.Options{ProjectRoot: f.root, Cwd: f.root})
	e := load(t, h, extensions.Spec{Name: "sandbox", Path: goGuest(t, sandboxGuest), Grants: extensions.Grants{FS: fs, Exec: execGrants}})
	f.ts = tools(t, e)
	return f
}

func (f *execFixture) exec(t *testing.T, argv []string, cwd string) tool.Result {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"argv": argv, "cwd": cwd})
	return run(context.Background(), f.ts, nil, "exec", string(b))
}

// execOut decodes a successful exec answer.
func execOut(t *testing.T, r tool.Result) (stdout string, code int) {
	t.Helper()
	var res struct {
		Stdout   string `json:"stdout"`
		ExitCode int    `json:"exitCode"`
	}
	if r.IsError {
		t.Fatalf("exec refused: %s", r.Text())
	}
	if err := json.Unmarshal([]byte(r.Text()), &res); err != nil {
		t.Fatalf("exec answer %q: %v", r.Text(), err)
	}
	return res.Stdout, res.ExitCode
}

// An exec grant with arguments allows only argv that match it; the ways an
// extension would smuggle code through a git grant are refused before
// anything runs.
func TestExecGrantArguments(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed for this test: %v", err)
	}
	f := newExecFixture(t, []string{"rw:src"}, []string{"git status*", "sh -c echo\\ safe"})
	pwned := filepath.Join(f.src, "PWNED")
	denied := [][]string{
		{"git", "-c", "alias.x=!sh -c 'touch " + pwned + "'", "x"},
		{"git", "-c", "core.fsmonitor=touch " + pwned, "status"},
		{"git", "--exec-path=" + f.src, "status"},
		{"git status; touch " + pwned},
		{"git status", "--porcelain"},
		{"git", "log"},
		{"sh", "-c", "git status; touch " + pwned},
		{"sh", "-c", "echo safe; touch " + pwned},
		{"sh", "-c", "echo", "safe"}, // the space is inside the one -c argument, not a boundary
		{"sh", "-c echo safe"},
		{"/usr/bin/git", "status"},
		{"sh"},
	}
	for _, argv := range denied {
		r := f.exec(t, argv, "src")
		if !r.IsError || !strings.Contains(r.Text(), "permission denied: extension sandbox may not exec") || !strings.Contains(r.Text(), "git status*") {
			t.Errorf("exec %q: %s", argv, r.Text())
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("a refused exec ran code")
	}

	// What the grants allow runs for real.
	if err := exec.Command("git", "-C", f.src, "init", "-q").Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.src, "new.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := execOut(t, f.exec(t, []string{"git", "status", "--porcelain"}, "src")); code != 0 || !strings.Contains(out, "?? new.txt") {
		t.Errorf("git status --porcelain: exit %d, %q", code, out)
	}
	if _, code := execOut(t, f.exec(t, []string{"git", "status"}, "src")); code != 0 {
		t.Errorf("git status: exit %d", code)
	}
	// "git status; sh" as separate words: git gets "status;" as its
	// subcommand and fails; no shell ever runs.
	if _, code := execOut(t, f.exec(t, []string{"git", "status;", "touch", pwned}, "src")); code == 0 {
		t.Errorf("git status; touch: exit 0")
	}
	if out, _ := execOut(t, f.exec(t, []string{"sh", "-c", "echo safe"}, "src")); out != "safe\n" {
		t.Errorf("sh -c 'echo safe': %q", out)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("an allowed exec ran the smuggled command")
	}
}

// The exec cwd must really lie inside an fs grant: relative paths, "..",
// and symlinks are resolved before the check, and the command runs in the
// real directory that was checked.
func TestExecCwdInsideGrants(t *testing.T) {
	f := newExecFixture(t, []string{"ro:src", "rw:out"}, []string{"pwd"})
	allowed := []struct{ cwd, want string }{
		{"src", f.src},
		{f.src, f.src},
		{"out", f.out},
		{"out/../src", f.src},
		{"src/to-out", f.out}, // a link from one grant into another
		{"via", f.src},        // a link from outside into a grant: it runs in the grant
	}
	for _, tc := range allowed {
		if out, _ := execOut(t, f.exec(t, []string{"pwd"}, tc.cwd)); strings.TrimSpace(out) != tc.want {
			t.Errorf("cwd %q ran in %q, want %q", tc.cwd, strings.TrimSpace(out), tc.want)
		}
	}
	denied := []struct{ cwd, want string }{
		{"", "the project root " + f.root},
		{".", f.root},
		{"src/..", f.root},
		{"src/../..", filepath.Dir(f.root)},
		{"../outside", f.outside},
		{f.outside, f.outside},
		{"/", "/"},
		{"src/escape", "(really " + f.outside + ")"},
		{"src/up-link", "(really " + filepath.Dir(f.root) + ")"},
		{filepath.Join(f.src, "escape"), "(really " + f.outside + ")"},
	}
	for _, tc := range denied {
		r := f.exec(t, []string{"pwd"}, tc.cwd)
		if !r.IsError || !strings.Contains(r.Text(), "permission denied: extension sandbox may not exec in") ||
			!strings.Contains(r.Text(), tc.want) || !strings.Contains(r.Text(), "grants.fs: ro:"+f.src+", rw:"+f.out) {
			t.Errorf("cwd %q: %s", tc.cwd, r.Text())
		}
	}
	if r := f.exec(t, []string{"pwd"}, "src/missing"); !r.IsError || !strings.Contains(r.Text(), "exec: cwd "+filepath.Join(f.src, "missing")) {
		t.Errorf("missing cwd: %s", r.Text())
	}
}

// With the project root granted, an empty cwd runs there; without any fs
// grant, exec cannot run anywhere.
func TestExecEmptyCwd(t *testing.T) {
	f := newExecFixture(t, []string{"ro:."}, []string{"pwd"})
	if out, _ := execOut(t, f.exec(t, []string{"pwd"}, "")); strings.TrimSpace(out) != f.root {
		t.Errorf("empty cwd ran in %q, want the project root %q", out, f.root)
	}
	g := newExecFixture(t, nil, []string{"pwd"})
	r := g.exec(t, []string{"pwd"}, "")
	if !r.IsError || !strings.Contains(r.Text(), "grants.fs: none") || !strings.Contains(r.Text(), "grant fs=ro:.") {
		t.Errorf("exec without fs grants: %s", r.Text())
	}
}

// A pattern that config validation would refuse is refused at load too:
// both use one grammar.
func TestExecGrantGrammarAtLoad(t *testing.T) {
	h := newHost(t, extensions.Options{ProjectRoot: t.TempDir()})
	for _, bad := range []string{" git", "git \\", "git[", ""} {
		_, err := h.Load(context.Background(), extensions.Spec{Name: "sandbox", Path: goGuest(t, sandboxGuest), Grants: extensions.Grants{Exec: []string{bad}}})
		if err == nil || !strings.Contains(err.Error(), "bad exec pattern") {
			t.Errorf("grant %q: %v", bad, err)
		}
	}
}
