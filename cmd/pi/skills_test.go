package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
)

// skillsProject is a project folder with three published skills (copied
// unchanged from anthropics/skills, runtime/skills/testdata), one hidden
// from the model, one root-level skill file and a prompt template.
func skillsProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "..", "runtime", "skills", "testdata", "anthropics")
	for _, s := range []string{"brand-guidelines", "internal-comms", "frontend-design"} {
		copyTree(t, filepath.Join(src, s), filepath.Join(dir, ".pi", "skills", s))
	}
	files := map[string]string{
		".pi/skills/hidden/SKILL.md": "---\ndescription: only by command\ndisable-model-invocation: true\n---\nSecret steps.\n",
		".pi/skills/notes.md":        "---\nname: notes\ndescription: Take notes <quickly> & well\n---\nWrite notes.\n",
		".pi/skills/broken/SKILL.md": "---\ndescription: [unclosed\n---\n",
		".pi/prompts/review.md":      "---\ndescription: Review files\nargument-hint: FILE...\n---\nReview $1 then ${@:2}; all: $ARGUMENTS\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o755); err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// skillsSection is the system prompt's skills block: from its first line
// to the date line.
func skillsSection(t *testing.T, req map[string]any) string {
	t.Helper()
	msgs, _ := req["messages"].([]any)
	sys, _ := msgs[0].(map[string]any)["content"].(string)
	i := strings.Index(sys, "\n\nThe following skills")
	j := strings.LastIndex(sys, "\nCurrent date: ")
	if i < 0 || j < i {
		t.Fatalf("no skills block in the system prompt:\n%s", sys)
	}
	return sys[i:j]
}

// lastUser is the text of the request's last user message.
func lastUser(t *testing.T, req map[string]any) string {
	t.Helper()
	chat := chatOf(t, req)
	for i := len(chat) - 1; i >= 0; i-- {
		if chat[i]["role"] == "user" {
			s, _ := chat[i]["text"].(string)
			return s
		}
	}
	t.Fatal("no user message")
	return ""
}

// TestInteropSkillsAndTemplates runs the reference agent and pi in print
// mode on the same project against the loopback server: the skills block
// of the system prompt, a /TEMPLATE prompt and a /skill:NAME prompt must
// reach the model as the same text.
func TestInteropSkillsAndTemplates(t *testing.T) {
	cli := referenceAgent(t)
	isolate(t)
	t.Setenv("HOME", t.TempDir())
	dir := skillsProject(t)
	for _, prompt := range []string{`/review a.go "b c" d`, "/skill:brand-guidelines make the slides on-brand", "/skill:hidden", "plain prompt"} {
		ref := openai.NewServer(t, openai.Reply{Text: "ok"})
		runReference(t, cli, refEnv(t, ref.URL, 128000), dir, "-p", prompt)
		pi := openai.NewServer(t, openai.Reply{Text: "ok"})
		runPi(t, dir, pi.URL, "--trust", "-p", prompt)
		r, p := ref.Requests()[0], pi.Requests()[0]
		if a, b := skillsSection(t, p), skillsSection(t, r); a != b {
			t.Errorf("skills block differs\npi:\n%s\nref:\n%s", a, b)
		}
		if a, b := lastUser(t, p), lastUser(t, r); a != b {
			t.Errorf("%q reached the model differently\npi:  %q\nref: %q", prompt, a, b)
		}
	}
}

// TestSkillsTrustAndList: without trust the project's skills stay out of
// the prompt and `pi skills list` says why; with --trust they are listed
// with the file and line of the front matter that does not parse; RPC
// get_commands lists templates and skills with the reference's sources.
func TestSkillsTrustAndList(t *testing.T) {
	isolate(t)
	t.Setenv("HOME", t.TempDir())
	dir := skillsProject(t)
	srv := openai.NewServer(t, openai.Reply{Text: "ok"})
	runPi(t, dir, srv.URL, "-p", "hello")
	msgs := srv.Requests()[0]["messages"].([]any)
	if sys := msgs[0].(map[string]any)["content"].(string); strings.Contains(sys, "<available_skills>") {
		t.Errorf("an untrusted project's skills reached the system prompt:\n%s", sys)
	}

	var out, errb bytes.Buffer
	if code := run([]string{"skills", "list", "--cwd", dir}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"No skills found.", ".pi/skills: skipped: project not trusted", "there is no pi.toml to trust"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("untrusted listing lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run([]string{"skills", "list", "--cwd", dir, "--trust"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"brand-guidelines", "notes", "(only by /skill:hidden, not in the system prompt)", "/review",
		filepath.Join(dir, ".pi", "skills", "broken", "SKILL.md") + ":2: skipped: front matter line 2:",
		"the project is trusted",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("trusted listing lacks %q:\n%s", want, out.String())
		}
	}

	help := runPi(t, dir, srv.URL, "--trust", "-p", "/help")
	for _, want := range []string{"/review FILE...", "Review files (prompt template)", "/skill:notes", "Take notes <quickly> & well (skill)"} {
		if !strings.Contains(help, want) {
			t.Errorf("/help lacks %q:\n%s", want, help)
		}
	}

	var rpcOut bytes.Buffer
	in := strings.NewReader(`{"id":"1","type":"get_commands"}` + "\n")
	if code := run([]string{"--mode", "rpc", "--trust", "--cwd", dir, "--base-url", srv.URL, "--model", "m"}, in, &rpcOut, &errb); code != 0 {
		t.Fatalf("rpc exit %d: %s", code, errb.String())
	}
	var resp struct {
		Data struct {
			Commands []struct {
				Name, Source string
				SourceInfo   struct{ Path, Scope string }
			}
		}
	}
	for _, line := range strings.Split(rpcOut.String(), "\n") {
		if strings.Contains(line, `"get_commands"`) {
			json.Unmarshal([]byte(line), &resp)
		}
	}
	var got []string
	for _, c := range resp.Data.Commands {
		got = append(got, c.Source+":"+c.Name+":"+c.SourceInfo.Scope)
	}
	want := "prompt:review:project,skill:skill:brand-guidelines:project,skill:skill:frontend-design:project,skill:skill:hidden:project,skill:skill:internal-comms:project,skill:skill:notes:project"
	if strings.Join(got, ",") != want {
		t.Errorf("get_commands = %s\nwant %s", strings.Join(got, ","), want)
	}
}
