package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/tool"
)

func def(name, snippet string, guidelines ...string) tool.ToolDefinition {
	return tool.ToolDefinition{Name: name, Description: name + " things.\nMore detail.", PromptSnippet: snippet, PromptGuidelines: guidelines}
}

func TestBuildSystemPrompt(t *testing.T) {
	now := time.Date(2026, 3, 7, 23, 59, 0, 0, time.UTC)
	tests := []struct {
		name    string
		opts    agent.PromptOptions
		want    []string // in this order
		notWant []string
	}{
		{
			name: "default",
			opts: agent.PromptOptions{
				Tools: []tool.ToolDefinition{
					def("read", "Read file contents", "Use read to examine files instead of cat or sed."),
					def("bash", "Execute bash commands (ls, grep, find, etc.)"),
					def("edit", "Make precise file edits", "Use edit for precise changes", "Use read to examine files instead of cat or sed."),
				},
				Cwd: "/home/me/proj",
				Now: now,
			},
			want: []string{
				"You are an expert coding assistant operating inside pi",
				"\n\nAvailable tools:\n- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, etc.)\n- edit: Make precise file edits\n",
				"\nGuidelines:\n- Use bash for file operations like ls, rg, find\n- Use read to examine files instead of cat or sed.\n- Use edit for precise changes\n- Be concise in your responses\n- Show file paths clearly when working with files",
				"\nCurrent date: 2026-03-07\nCurrent working directory: /home/me/proj",
			},
			notWant: []string{"# Project Context"},
		},
		{
			name:    "grep active prefers the tools over bash",
			opts:    agent.PromptOptions{Tools: []tool.ToolDefinition{def("bash", "Run"), def("grep", "Search")}, Now: now},
			want:    []string{"- Prefer grep/find/ls tools over bash for file exploration (faster, respects .gitignore)"},
			notWant: []string{"Use bash for file operations"},
		},
		{
			name:    "no snippet falls back to the description's first line",
			opts:    agent.PromptOptions{Tools: []tool.ToolDefinition{def("loc", "")}, Now: now},
			want:    []string{"- loc: loc things.\n"},
			notWant: []string{"More detail.", "Use bash for file operations"},
		},
		{
			name: "no tools",
			opts: agent.PromptOptions{Now: now},
			want: []string{"Available tools:\n(none)\n"},
		},
		{
			name: "agents.md and append",
			opts: agent.PromptOptions{Tools: []tool.ToolDefinition{def("read", "Read")}, AgentsMD: "Run `make test` before committing.\n", Append: "Answer in French.", Cwd: "/p", Now: now},
			want: []string{
				"- Show file paths clearly when working with files\n\nAnswer in French.",
				"\n\n# Project Context\n\nProject-specific instructions and guidelines from AGENTS.md:\n\nRun `make test` before committing.\n",
				"\nCurrent date: 2026-03-07\nCurrent working directory: /p",
			},
		},
		{
			name: "override",
			opts: agent.PromptOptions{Tools: []tool.ToolDefinition{def("read", "Read")}, Override: "You are a pirate.", Append: "Arr.", AgentsMD: "Be nice.", Cwd: "/p", Now: now},
			want: []string{
				"You are a pirate.\n\nArr.\n\n# Project Context",
				"Be nice.\n",
				"\nCurrent date: 2026-03-07\nCurrent working directory: /p",
			},
			notWant: []string{"Available tools", "expert coding assistant", "Guidelines"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := agent.BuildSystemPrompt(tc.opts)
			rest := got
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("prompt lacks (in order) %q:\n%s", w, got)
				}
				rest = rest[i+len(w):]
			}
			for _, nw := range tc.notWant {
				if strings.Contains(got, nw) {
					t.Fatalf("prompt has %q:\n%s", nw, got)
				}
			}
			if !strings.HasSuffix(got, "Current working directory: "+tc.opts.Cwd) {
				t.Fatalf("prompt does not end with the directory:\n%s", got)
			}
		})
	}
}

func TestBuildSystemPromptDefaultsToToday(t *testing.T) {
	before := time.Now().Format("2006-01-02")
	got := agent.BuildSystemPrompt(agent.PromptOptions{Cwd: "/x"})
	after := time.Now().Format("2006-01-02")
	if !strings.Contains(got, "Current date: "+before) && !strings.Contains(got, "Current date: "+after) {
		t.Fatalf("prompt has no current date:\n%s", got)
	}
}

func TestLoadAgentsMD(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string // relative path -> content ("/" suffix: folder)
		cwd     string
		want    string
		wantErr string
	}{
		{"in cwd", map[string]string{"AGENTS.md": "root rules", "sub/AGENTS.md": "sub rules"}, "sub", "sub rules", ""},
		{"nearest parent", map[string]string{"AGENTS.md": "root rules", "a/b/c/": ""}, "a/b/c", "root rules", ""},
		{"stops at the git root", map[string]string{"AGENTS.md": "outside", "repo/.git/": "", "repo/src/": ""}, "repo/src", "", ""},
		{"git root itself counts", map[string]string{"repo/AGENTS.md": "repo rules", "repo/.git/": "", "repo/src/": ""}, "repo/src", "repo rules", ""},
		{"git file (worktree) marks a root", map[string]string{"AGENTS.md": "outside", "wt/.git": "gitdir: /elsewhere", "wt/x/": ""}, "wt/x", "", ""},
		{"a folder named AGENTS.md", map[string]string{".git/": "", "AGENTS.md/": ""}, ".", "", "AGENTS.md"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, content := range tc.files {
				p := filepath.Join(root, rel)
				if strings.HasSuffix(rel, "/") {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, p, content)
			}
			got, err := agent.LoadAgentsMD(filepath.Join(root, tc.cwd))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Context files as the reference agent loads them: the global one first,
// then one per folder from the root down to cwd, AGENTS.md before
// CLAUDE.md; written with their paths.
func TestLoadContextFiles(t *testing.T) {
	root := t.TempDir()
	global := filepath.Join(root, "home", ".pi", "agent")
	for path, content := range map[string]string{
		"home/.pi/agent/AGENTS.md":    "global rules",
		"work/CLAUDE.md":              "work rules (claude)",
		"work/repo/AGENTS.md":         "repo rules",
		"work/repo/CLAUDE.md":         "ignored: AGENTS.md wins",
		"work/repo/.git/HEAD":         "ref: main",
		"work/repo/pkg/sub/AGENTS.md": "sub rules",
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, content)
	}
	// A folder named AGENTS.md: reported, and CLAUDE.md is used instead.
	if err := os.MkdirAll(filepath.Join(root, "work/repo/pkg/AGENTS.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "work/repo/pkg/CLAUDE.md"), "pkg rules (claude)")

	files, err := agent.LoadContextFiles(filepath.Join(root, "work/repo/pkg/sub"), global, nil)
	if err == nil || !strings.Contains(err.Error(), "AGENTS.md: not a regular file") {
		t.Fatalf("err = %v, want the folder named AGENTS.md reported", err)
	}
	var got []string
	for _, f := range files {
		rel, _ := filepath.Rel(root, f.Path)
		got = append(got, rel+"="+f.Content)
	}
	want := []string{
		"home/.pi/agent/AGENTS.md=global rules",
		"work/CLAUDE.md=work rules (claude)",
		"work/repo/AGENTS.md=repo rules",
		"work/repo/pkg/CLAUDE.md=pkg rules (claude)",
		"work/repo/pkg/sub/AGENTS.md=sub rules",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("context files\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The global folder inside the walk counts once.
	files, _ = agent.LoadContextFiles(global, global, nil)
	if len(files) != 1 {
		t.Fatalf("%d files when cwd is the global folder, want 1", len(files))
	}

	p := agent.BuildSystemPrompt(agent.PromptOptions{Cwd: "/p", ContextFiles: []agent.ContextFile{{Path: "/a/AGENTS.md", Content: "A"}, {Path: "/a/b/CLAUDE.md", Content: "B"}}, AgentsMD: "ignored"})
	wantPart := "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n## /a/AGENTS.md\n\nA\n\n## /a/b/CLAUDE.md\n\nB\n\n\nCurrent date: "
	if !strings.Contains(p, wantPart) || strings.Contains(p, "ignored") {
		t.Fatalf("prompt:\n%s", p)
	}
}
