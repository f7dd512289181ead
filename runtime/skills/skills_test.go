package skills

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDiagnostics checks what `pi skills list` reports: the unparseable
// front matter with its file line, the warnings of loaded skills, the
// skipped and the shadowed, and the project left out when not trusted.
func TestDiagnostics(t *testing.T) {
	o := fixture(t)
	set := Discover(o)
	var lines []string
	for _, d := range set.Diagnostics {
		lines = append(lines, d.String())
	}
	all := strings.Join(lines, "\n")
	skills := filepath.Join(o.Cwd, ".pi", "skills")
	for _, want := range []string{
		filepath.Join(skills, "broken", "SKILL.md") + ":2: skipped: front matter line 2:",
		filepath.Join(skills, "nodesc", "SKILL.md") + ": skipped: description is required",
		filepath.Join(skills, "long", "SKILL.md") + ": warning: description exceeds 1024 characters (1199)",
		filepath.Join(skills, "Bad_Name", "SKILL.md") + ": warning: name contains invalid characters",
		filepath.Join(o.PIHome, "skills", "hidden", "SKILL.md") + ": shadowed: name \"hidden\" collision: " + filepath.Join(skills, "hidden", "SKILL.md"),
		filepath.Join(o.PIHome, "prompts", "review.md") + ": shadowed: name \"/review\" collision",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, all)
		}
	}
	for _, name := range []string{"long", "Bad_Name", "hidden", "brand-guidelines", "user-one"} {
		if _, ok := Find(set.Skills, name); !ok {
			t.Errorf("skill %s not loaded (a warning must not skip it)", name)
		}
	}
	if s, _ := Find(set.Skills, "user-one"); s.AllowedTools != "Read Bash" || s.Source != "user" {
		t.Errorf("user-one: allowed-tools %q, source %q", s.AllowedTools, s.Source)
	}
	if strings.Contains(FormatForPrompt(set.Skills), "<name>hidden</name>") {
		t.Error("a disable-model-invocation skill is in the prompt")
	}

	o.ProjectTrusted = false
	set = Discover(o)
	for _, s := range set.Skills {
		if s.Source != "user" {
			t.Errorf("untrusted project: %s loaded from %s", s.Name, s.FilePath)
		}
	}
	if _, ok := FindTemplate(set.Templates, "plain"); ok {
		t.Error("untrusted project: its template loaded")
	}
	if tp, _ := FindTemplate(set.Templates, "review"); tp.Content != "user review" {
		t.Errorf("untrusted project: review is %q, want the user's", tp.Content)
	}
	var skipped []string
	for _, d := range set.Diagnostics {
		if strings.Contains(d.Message, "project not trusted") {
			skipped = append(skipped, d.Path)
		}
	}
	if len(skipped) != 4 { // .pi/skills, cwd's and the root's .agents/skills, .pi/prompts
		t.Errorf("untrusted folders reported: %q", skipped)
	}
}

// TestFrontMatter is the reference's front-matter split on the edge cases.
func TestFrontMatter(t *testing.T) {
	for _, c := range []struct{ in, body, desc string }{
		{"no front matter\n", "no front matter\n", ""},
		{"---\ndescription: d\n---\n\n body \n", "body", "d"},
		{"---\n---\nempty\n", "empty", ""},
		{"---\ndescription: never closed\n", "---\ndescription: never closed\n", ""},
		{"--- \ndescription: x\n---\nb", "b", "x"},
		{"---\r\ndescription: crlf\r\n---\r\nb\r\n", "b", "crlf"},
		{"---\n- a list\n---\nb", "b", ""},
	} {
		fm, body, err := ParseFrontMatter(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if d, _ := fm["description"].(string); body != c.body || d != c.desc {
			t.Errorf("%q: body %q desc %q, want %q %q", c.in, body, d, c.body, c.desc)
		}
	}
}
