package subagent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadOrderFormatsAndTrust(t *testing.T) {
	root := t.TempDir()
	home, pihome, proj := filepath.Join(root, "home"), filepath.Join(root, "pihome"), filepath.Join(root, "proj")
	cwd := filepath.Join(proj, "sub", "dir")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	// The reference's example scout, as published.
	write(t, filepath.Join(pihome, "agents", "scout.md"), "---\nname: scout\ndescription: Fast codebase recon\ntools: read, grep, find, ls, bash\nmodel: claude-haiku-4-5\n---\n\nYou are a scout.\n")
	write(t, filepath.Join(pihome, "agents", "planner.md"), "---\nname: planner\ndescription: Plans\nthinking: HIGH\ntools:\n  - read\n  - grep\n---\nPlan.\n")
	write(t, filepath.Join(pihome, "agents", "notes.txt"), "not an agent")
	write(t, filepath.Join(pihome, "agents", "broken.md"), "---\nname: broken\ndescription: x\ntools: {a: 1}\n---\n")
	write(t, filepath.Join(pihome, "agents", "nodesc.md"), "---\nname: nodesc\n---\nbody\n")
	// Claude Code's format, as its docs show it.
	write(t, filepath.Join(home, ".claude", "agents", "reviewer.md"), "---\nname: reviewer\ndescription: Code review specialist. Use proactively after code changes.\ntools: Read, Grep, Glob, Bash, WebFetch\nmodel: inherit\n---\nYou are a senior code reviewer.\n")
	write(t, filepath.Join(home, ".claude", "agents", "none.md"), "---\nname: none\ndescription: no tools\ntools: []\nmodel: sonnet\n---\nx\n")
	// The project's scout replaces the user's.
	write(t, filepath.Join(proj, ".pi", "agents", "scout.md"), "---\nname: scout\ndescription: Project scout\n---\nProject scout.\n")

	s := Load(LoadOptions{PIHome: pihome, Home: home, Cwd: cwd, ProjectRoot: proj, Project: true, Claude: true})
	if got := s.Names(); !slices.Equal(got, []string{"none", "planner", "reviewer", "scout"}) {
		t.Fatalf("names %v, skipped %v", got, s.Skipped)
	}
	scout, _ := s.Find("scout")
	if scout.Source != SourceProject || scout.Tools != nil || scout.SystemPrompt != "Project scout." {
		t.Errorf("scout %+v", scout)
	}
	if len(s.Shadowed) != 1 || !strings.Contains(s.Shadowed[0].Msg, filepath.Join(pihome, "agents", "scout.md")) {
		t.Errorf("shadowed %v", s.Shadowed)
	}
	planner, _ := s.Find("planner")
	if !slices.Equal(planner.Tools, []string{"read", "grep"}) || planner.Thinking != "high" {
		t.Errorf("planner %+v", planner)
	}
	rev, _ := s.Find("reviewer")
	if !rev.Claude || rev.Model != "" || !slices.Equal(rev.Tools, []string{"read", "grep", "find", "bash", "WebFetch"}) {
		t.Errorf("reviewer %+v", rev)
	}
	none, _ := s.Find("none")
	if none.Tools == nil || len(none.Tools) != 0 || none.Model != "sonnet" {
		t.Errorf("none %+v", none)
	}
	var skipped []string
	for _, p := range s.Skipped {
		skipped = append(skipped, p.Msg)
	}
	want := []string{
		filepath.Join(pihome, "agents", "broken.md") + ":4: tools: a comma-separated list of names, or a list",
		filepath.Join(pihome, "agents", "nodesc.md") + ":1: front matter has no description",
	}
	if !slices.Equal(skipped, want) {
		t.Errorf("skipped\n%q\nwant\n%q", skipped, want)
	}

	// Untrusted: no project agents, the user's scout is back; Claude off:
	// none of Claude's.
	s = Load(LoadOptions{PIHome: pihome, Home: home, Cwd: cwd, ProjectRoot: proj})
	if got := s.Names(); !slices.Equal(got, []string{"planner", "scout"}) {
		t.Fatalf("untrusted names %v", got)
	}
	if scout, _ := s.Find("scout"); scout.Source != SourceUser || !slices.Equal(scout.Tools, []string{"read", "grep", "find", "ls", "bash"}) || scout.Model != "claude-haiku-4-5" {
		t.Errorf("user scout %+v", scout)
	}
}

func TestParseErrorsAtTheLine(t *testing.T) {
	for text, want := range map[string]string{
		"---\nname: a\ndescription: b: c\n---\n":              "a.md:3: mapping values are not allowed in this context",
		"---\nname: a\ndescription: d\nthinking: huge\n---\n": `a.md:1: thinking "huge" is not a thinking level (off, minimal, low, medium, high, xhigh)`,
		"no front matter":                       "a.md:1: no front matter",
		"---\nname: a b\ndescription: d\n---\n": `a.md:1: name "a b" has white space or a slash`,
	} {
		_, err := Parse("a.md", []byte(text), SourceUser)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: got %v, want %s", text, err, want)
		}
	}
}

// TestClaudeDescriptionsThatAreNotYAML: Claude Code's own plugins ship
// agents whose description holds unquoted "Examples: user: ..." lines; a
// Claude folder's file reads them line by line, pi's own folder keeps the
// YAML error.
func TestClaudeDescriptionsThatAreNotYAML(t *testing.T) {
	text := "---\nname: code-simplifier\ndescription: Use this agent when code was written. Examples:\n<example>\nuser: \"Simplify it\"\nassistant: \"I'll use the code-simplifier agent\"\n</example>\ntools: Read, Edit\nmodel: opus\ncolor: blue\n---\n\nYou simplify code.\n"
	def, err := Parse("c.md", []byte(text), SourceClaudeProject)
	if err != nil {
		t.Fatal(err)
	}
	want := "Use this agent when code was written. Examples:\n<example>\nuser: \"Simplify it\"\nassistant: \"I'll use the code-simplifier agent\"\n</example>"
	if def.Name != "code-simplifier" || def.Description != want || !slices.Equal(def.Tools, []string{"read", "edit"}) || def.Model != "opus" || def.SystemPrompt != "You simplify code." {
		t.Errorf("got %+v", def)
	}
	if _, err := Parse("c.md", []byte(text), SourceUser); err == nil || !strings.HasPrefix(err.Error(), "c.md:3: ") {
		t.Errorf("pi's folder: %v", err)
	}
}
