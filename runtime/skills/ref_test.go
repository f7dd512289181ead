package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// refDist is the reference agent's dist folder, installed by cmd/pi's
// interoperability tests; the test is skipped, saying so, without node or
// without that install.
func refDist(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not installed, so the comparison with the reference agent's code cannot run: %v", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache folder for the reference agent: %v", err)
	}
	dist := filepath.Join(cache, "pi-go", "ref-0.73.1", "node_modules", "@mariozechner", "pi-coding-agent", "dist")
	if _, err := os.Stat(filepath.Join(dist, "core", "skills.js")); err != nil {
		t.Skipf("the reference agent 0.73.1 is not installed in %s (go test -run Interop ./cmd/pi installs it): %v", dist, err)
	}
	return dist
}

// runRef runs testdata/ref.mjs in mode with input as JSON and decodes its
// answer into out.
func runRef(t *testing.T, mode string, home string, input, out any) {
	t.Helper()
	dist := refDist(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in, _ := json.Marshal(input)
	script, _ := filepath.Abs(filepath.Join("testdata", "ref.mjs"))
	cmd := exec.CommandContext(ctx, "node", script, dist, mode)
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ref.mjs %s: %v\n%s", mode, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("ref.mjs %s answer: %v\n%s", mode, err, stdout.String())
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies a testdata folder.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		write(t, filepath.Join(dst, rel), string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fixture lays out skills and templates in every place both agents look,
// with the cases the reference treats specially; it returns the options.
func fixture(t *testing.T) Options {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	agentDir := filepath.Join(home, ".pi", "agent")
	repo := filepath.Join(root, "outer", "repo")
	cwd := filepath.Join(repo, "sub", "dir")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"brand-guidelines", "internal-comms", "frontend-design"} {
		copyDir(t, filepath.Join("testdata", "anthropics", s), filepath.Join(cwd, ".pi", "skills", "published", s))
	}
	long := strings.Repeat("Long description é. ", 60)
	write(t, filepath.Join(cwd, ".pi", "skills", "root-file.md"), "---\ndescription: a root-level skill file\n---\nbody\n")
	write(t, filepath.Join(cwd, ".pi", "skills", "long", "SKILL.md"), "---\nname: long\ndescription: "+long+"\n---\nlong body\n")
	write(t, filepath.Join(cwd, ".pi", "skills", "Bad_Name", "SKILL.md"), "---\ndescription: \"quotes \\\"and\\\" 'apostrophes'\"\n---\n")
	write(t, filepath.Join(cwd, ".pi", "skills", "hidden", "SKILL.md"), "---\ndescription: only by command\ndisable-model-invocation: true\n---\nsecret steps\n")
	write(t, filepath.Join(cwd, ".pi", "skills", "nodesc", "SKILL.md"), "---\nname: nodesc\n---\nbody\n")
	write(t, filepath.Join(cwd, ".pi", "skills", "broken", "SKILL.md"), "---\ndescription: [unclosed\nname: broken\n---\n")
	write(t, filepath.Join(cwd, ".pi", "skills", "nested", "deeper", "SKILL.md"), "---\ndescription: nested two levels\n---\n")
	write(t, filepath.Join(cwd, ".pi", "skills", "nested", "deeper", "inner", "SKILL.md"), "---\ndescription: never read, its parent is a skill\n---\n")
	write(t, filepath.Join(cwd, ".pi", "skills", ".dot", "SKILL.md"), "---\ndescription: dot folder\n---\n")
	write(t, filepath.Join(cwd, ".pi", "skills", "crlf", "SKILL.md"), "---\r\ndescription: windows line ends\r\n---\r\nbody\r\n")
	write(t, filepath.Join(cwd, ".pi", "skills", "dated", "SKILL.md"), "---\ndescription: 2024-01-01\n---\n")
	write(t, filepath.Join(cwd, ".pi", "skills", "block", "SKILL.md"), "---\ndescription: |\n  Two lines\n  of text\n---\n")
	write(t, filepath.Join(cwd, ".pi", "skills", "dupkey", "SKILL.md"), "---\ndescription: a\ndescription: b\n---\n")
	write(t, filepath.Join(cwd, ".pi", "skills", "numname", "SKILL.md"), "---\nname: 123\ndescription: a number as name\n---\n")
	write(t, filepath.Join(cwd, ".agents", "skills", "agents-cwd", "SKILL.md"), "---\ndescription: in cwd's .agents\n---\n")
	write(t, filepath.Join(cwd, ".agents", "skills", "root.md"), "---\ndescription: root files are not skills in .agents\n---\n")
	write(t, filepath.Join(repo, ".agents", "skills", "agents-root", "SKILL.md"), "---\ndescription: at the git root\n---\n")
	write(t, filepath.Join(repo, ".agents", "skills", "long", "SKILL.md"), "---\ndescription: shadowed by the project's\n---\n")
	write(t, filepath.Join(root, "outer", ".agents", "skills", "above", "SKILL.md"), "---\ndescription: above the git root\n---\n")
	write(t, filepath.Join(agentDir, "skills", "user-one", "SKILL.md"), "---\ndescription: a user skill\nallowed-tools: Read Bash\n---\n")
	write(t, filepath.Join(agentDir, "skills", "hidden", "SKILL.md"), "---\ndescription: shadowed\n---\n")
	write(t, filepath.Join(home, ".agents", "skills", "home-agents", "SKILL.md"), "---\ndescription: in ~/.agents\n---\n")

	write(t, filepath.Join(cwd, ".pi", "prompts", "review.md"), "---\ndescription: Review $1\nargument-hint: FILE\n---\n\nReview $1 carefully.\nFocus: ${@:2}\n\n")
	write(t, filepath.Join(cwd, ".pi", "prompts", "plain.md"), "\n\n  "+strings.Repeat("A first line that is rather long, ", 3)+"\nrest $@\n")
	write(t, filepath.Join(cwd, ".pi", "prompts", "notes.txt"), "not a template")
	write(t, filepath.Join(agentDir, "prompts", "review.md"), "---\ndescription: shadowed\n---\nuser review")
	write(t, filepath.Join(agentDir, "prompts", "short.md"), "Short one $ARGUMENTS")
	return Options{Cwd: cwd, PIHome: agentDir, Home: home, ProjectTrusted: true}
}

type refSkill struct {
	Name   string     `json:"name"`
	File   string     `json:"file"`
	Hidden bool       `json:"hidden"`
	Info   SourceInfo `json:"sourceInfo"`
}

type refTemplate struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Content     string     `json:"content"`
	File        string     `json:"file"`
	Info        SourceInfo `json:"sourceInfo"`
}

// TestDiscoverMatchesReference lays out skills and templates in every
// folder both agents search and compares what the reference's resource
// loader finds, the system prompt block it writes and its templates with
// pi's.
func TestDiscoverMatchesReference(t *testing.T) {
	o := fixture(t)
	var ref struct {
		Skills    []refSkill    `json:"skills"`
		Block     string        `json:"block"`
		Templates []refTemplate `json:"templates"`
	}
	runRef(t, "discover", o.Home, map[string]string{"cwd": o.Cwd, "agentDir": o.PIHome}, &ref)
	set := Discover(o)
	var got []refSkill
	for _, s := range set.Skills {
		got = append(got, refSkill{Name: s.Name, File: s.FilePath, Hidden: s.DisableModelInvocation, Info: s.SourceInfo()})
	}
	gj, _ := json.MarshalIndent(got, "", " ")
	rj, _ := json.MarshalIndent(ref.Skills, "", " ")
	if string(gj) != string(rj) {
		t.Errorf("skills differ\npi:  %s\nref: %s", gj, rj)
	}
	if b := FormatForPrompt(set.Skills); b != ref.Block {
		t.Errorf("prompt block differs\npi:\n%s\nref:\n%s", b, ref.Block)
	}
	var gt []refTemplate
	for _, tp := range set.Templates {
		gt = append(gt, refTemplate{Name: tp.Name, Description: tp.Description, Content: tp.Content, File: tp.FilePath, Info: tp.SourceInfo()})
	}
	gj, _ = json.MarshalIndent(gt, "", " ")
	rj, _ = json.MarshalIndent(ref.Templates, "", " ")
	if string(gj) != string(rj) {
		t.Errorf("templates differ\npi:  %s\nref: %s", gj, rj)
	}
	if len(ref.Skills) < 10 || len(ref.Templates) != 3 {
		t.Errorf("the fixture lost its cases: %d skills, %d templates", len(ref.Skills), len(ref.Templates))
	}
}

// TestSkillCommandMatchesReference compares /skill:NAME expansion.
func TestSkillCommandMatchesReference(t *testing.T) {
	o := fixture(t)
	texts := []string{"/skill:brand-guidelines", "/skill:hidden  do it  now ", "/skill:crlf\targ", "/skill:missing x", "/skill:", "no command", "/skill:long a \"b c\""}
	var ref []string
	runRef(t, "skillcmd", o.Home, map[string]any{"cwd": o.Cwd, "agentDir": o.PIHome, "texts": texts}, &ref)
	set := Discover(o)
	for i, text := range texts {
		got, _, err := ExpandCommand(text, set.Skills)
		if err != nil {
			t.Fatal(err)
		}
		if got != ref[i] {
			t.Errorf("%q:\npi:  %q\nref: %q", text, got, ref[i])
		}
	}
}

// expandCases are template bodies and argument texts; the expected
// results are the reference's, computed by its own functions.
var expandCases = []struct{ content, args string }{
	{"Review $1 and $2", "a.go b.go"},
	{"All: $@ | $ARGUMENTS", "one 'two three' \"four five\""},
	{"From 2: ${@:2}; two from 1: ${@:1:2}; zero: ${@:0}; none ${@:9}; len0 ${@:1:0}", "a b c d"},
	{"$0 $10 $1$2 $01 $99999999999999999999", "x y"},
	{"$1", "'unclosed quote runs"},
	{"[$1] [$2] [$3]", "  spaced\t\ttabs  "},
	{"args with dollars: $ARGUMENTS", "$1 $$ $& $` $' ${@:1}"},
	{"positional carries: $1 then $@", "${@:2} $ARGUMENTS"},
	{"no placeholders", "ignored args"},
	{"$@", ""},
	{"quotes\"inside: $1", "a\"b c\"d 'e'f"},
	{"${@:2:1}${@:3:5}", "é ü 日本 語"},
}

// TestSubstituteMatchesReference runs the reference's parseCommandArgs and
// substituteArgs on a table of cases and compares pi's answers.
func TestSubstituteMatchesReference(t *testing.T) {
	type in struct {
		Content string `json:"content"`
		Args    string `json:"args"`
	}
	var cases []in
	for _, c := range expandCases {
		cases = append(cases, in{c.content, c.args})
	}
	var ref []struct {
		Args []string `json:"args"`
		Out  string   `json:"out"`
		Line string   `json:"line"`
	}
	runRef(t, "expand", t.TempDir(), cases, &ref)
	ts := []Template{{Name: "t"}}
	for i, c := range cases {
		args := SplitArgs(c.Args)
		if a, b := strings.Join(args, "\x00"), strings.Join(ref[i].Args, "\x00"); a != b {
			t.Errorf("args %q: pi %q, ref %q", c.Args, args, ref[i].Args)
		}
		if got := Substitute(c.Content, args); got != ref[i].Out {
			t.Errorf("%q with %q:\npi:  %q\nref: %q", c.Content, c.Args, got, ref[i].Out)
		}
		ts[0].Content = c.Content
		if got, _ := ExpandTemplate("/t "+c.Args, ts); got != ref[i].Line {
			t.Errorf("/t %q:\npi:  %q\nref: %q", c.Args, got, ref[i].Line)
		}
	}
}
