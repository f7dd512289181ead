package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-go/pi/runtime/tool"
)

// AgentsFile is the name of the project instructions file LoadAgentsMD looks
// for.
const AgentsFile = "AGENTS.md"

// PromptOptions are the inputs of BuildSystemPrompt.
type PromptOptions struct {
	// Tools are the active tools, in order.
	Tools []tool.ToolDefinition
	// Cwd is the working directory, stated at the end of the prompt.
	Cwd string
	// ContextFiles are the context files (LoadContextFiles), written under
	// "# Project Context" with their paths, as the reference agent does.
	ContextFiles []ContextFile
	// AgentsMD is the contents of one AGENTS.md, for callers that load it
	// themselves; ignored when ContextFiles is set.
	AgentsMD string
	// Override replaces the built-in intro, tool list and guidelines
	// (--system-prompt); AGENTS.md, the date and the directory still follow.
	Override string
	// Append is added after the intro or the override (--append-system-prompt).
	Append string
	// Now is the date stated in the prompt; the zero value means time.Now().
	Now time.Time
	// Skills is the skills' block (runtime/skills FormatForPrompt), added
	// after the context files when the read tool is active, as the
	// reference agent does.
	Skills string
}

const promptIntro = "You are an expert coding assistant operating inside pi, a coding agent harness. " +
	"You help users by reading files, executing commands, editing code, and writing new files."

// BuildSystemPrompt returns the system prompt for a run: a short intro, the
// line "Available tools:" with `- NAME: SNIPPET` for each active tool (its
// PromptSnippet, or the first line of its description), the guidelines of
// the active tools (deduplicated, in order, with pi's own at the end), then
// Append, the context files (or AgentsMD) under "# Project Context", the
// current date and the working directory. With Override, the override text stands for the
// intro, tool list and guidelines.
func BuildSystemPrompt(p PromptOptions) string {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	var b strings.Builder
	if p.Override != "" {
		b.WriteString(p.Override)
	} else {
		b.WriteString(promptIntro)
		b.WriteString("\n\nAvailable tools:\n")
		b.WriteString(toolList(p.Tools))
		b.WriteString("\n\nIn addition to the tools above, you may have access to other custom tools depending on the project.")
		b.WriteString("\n\nGuidelines:\n")
		for _, g := range guidelines(p.Tools) {
			b.WriteString("- ")
			b.WriteString(g)
			b.WriteString("\n")
		}
	}
	out := strings.TrimRight(b.String(), "\n")
	b.Reset()
	b.WriteString(out)
	if p.Append != "" {
		b.WriteString("\n\n")
		b.WriteString(p.Append)
	}
	if len(p.ContextFiles) > 0 {
		b.WriteString("\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n")
		for _, f := range p.ContextFiles {
			b.WriteString("## " + f.Path + "\n\n" + f.Content + "\n\n")
		}
	} else if agents := strings.TrimSpace(p.AgentsMD); agents != "" {
		b.WriteString("\n\n# Project Context\n\nProject-specific instructions and guidelines from ")
		b.WriteString(AgentsFile)
		b.WriteString(":\n\n")
		b.WriteString(agents)
		b.WriteString("\n")
	}
	if p.Skills != "" && hasTool(p.Tools, "read") {
		b.WriteString(p.Skills)
	}
	b.WriteString("\nCurrent date: ")
	b.WriteString(now.Format("2006-01-02"))
	b.WriteString("\nCurrent working directory: ")
	b.WriteString(filepath.ToSlash(p.Cwd))
	return b.String()
}

func hasTool(defs []tool.ToolDefinition, name string) bool {
	for _, d := range defs {
		if d.Name == name {
			return true
		}
	}
	return false
}

// toolList is the `- NAME: SNIPPET` lines of the tools that have a snippet
// or a description; "(none)" when no tool has either.
func toolList(defs []tool.ToolDefinition) string {
	var lines []string
	for _, d := range defs {
		s := strings.TrimSpace(d.PromptSnippet)
		if s == "" {
			s, _, _ = strings.Cut(strings.TrimSpace(d.Description), "\n")
			s = strings.TrimSpace(s)
		}
		if s == "" {
			continue
		}
		lines = append(lines, "- "+d.Name+": "+s)
	}
	if len(lines) == 0 {
		return "(none)"
	}
	return strings.Join(lines, "\n")
}

// guidelines collects the active tools' guidelines, deduplicated in first
// occurrence order, after a file-exploration hint that depends on which of
// bash, grep, find and ls are active, and before pi's two standing ones.
func guidelines(defs []tool.ToolDefinition) []string {
	active := map[string]bool{}
	for _, d := range defs {
		active[d.Name] = true
	}
	var out []string
	seen := map[string]bool{}
	add := func(g string) {
		g = strings.TrimSpace(g)
		if g == "" || seen[g] {
			return
		}
		seen[g] = true
		out = append(out, g)
	}
	explorers := active["grep"] || active["find"] || active["ls"]
	switch {
	case active["bash"] && !explorers:
		add("Use bash for file operations like ls, rg, find")
	case active["bash"] && explorers:
		add("Prefer grep/find/ls tools over bash for file exploration (faster, respects .gitignore)")
	}
	for _, d := range defs {
		for _, g := range d.PromptGuidelines {
			add(g)
		}
	}
	add("Be concise in your responses")
	add("Show file paths clearly when working with files")
	return out
}

// LoadAgentsMD returns the contents of the AGENTS.md that applies to cwd:
// the one in cwd, or else in the nearest parent, looking no further up than
// the git root (the first folder holding a .git entry) or the filesystem
// root. It returns "" and no error when there is none.
//
// # Errors
//
// It fails when cwd cannot be made absolute, or when an AGENTS.md is found
// but cannot be read (a folder of that name, no permission); the error names
// the path.
func LoadAgentsMD(cwd string) (string, error) {
	dir, err := filepath.Abs(cwd)
	if err != nil {
		return "", fmt.Errorf("load %s: %w", AgentsFile, err)
	}
	for {
		path := filepath.Join(dir, AgentsFile)
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			return string(data), nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("load %s: %w", path, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return "", nil // the git root: look no further up
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// ContextFile is a file of instructions for the model (AGENTS.md or
// CLAUDE.md) and its contents.
type ContextFile struct {
	Path    string
	Content string
}

// contextFileNames are the names looked for in each folder, the first found
// counting (the reference agent's order).
var contextFileNames = []string{"AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"}

// LoadContextFiles returns the context files for cwd as the reference
// agent finds them: the one in globalDir (pi's home, $PI_HOME) first, then
// one per folder from the filesystem root down to cwd, each folder's
// AGENTS.md, else CLAUDE.md (AGENTS.MD and CLAUDE.MD too). A file found
// twice (globalDir is an ancestor) counts once. read reads a file (nil:
// os.ReadFile; runtime/app refuses files others can change). A file that
// cannot be read is skipped (the folder's next name is tried) and reported
// in the error; the others are still returned.
func LoadContextFiles(cwd, globalDir string, read func(path string) ([]byte, error)) ([]ContextFile, error) {
	if read == nil {
		read = os.ReadFile
	}
	var out []ContextFile
	var errs []error
	seen := map[string]bool{}
	load := func(dir string) *ContextFile {
		for _, name := range contextFileNames {
			path := filepath.Join(dir, name)
			st, err := os.Stat(path)
			if err != nil {
				continue
			}
			if seen[path] {
				return nil
			}
			seen[path] = true
			if !st.Mode().IsRegular() {
				errs = append(errs, fmt.Errorf("load context file %s: not a regular file", path))
				continue
			}
			data, err := read(path)
			if err != nil {
				errs = append(errs, fmt.Errorf("load context file: %w", err))
				continue
			}
			return &ContextFile{Path: path, Content: string(data)}
		}
		return nil
	}
	if globalDir != "" {
		if abs, err := filepath.Abs(globalDir); err == nil {
			if f := load(abs); f != nil {
				out = append(out, *f)
			}
		}
	}
	dir, err := filepath.Abs(cwd)
	if err != nil {
		return out, fmt.Errorf("load context files: %w", err)
	}
	var chain []ContextFile
	for {
		if f := load(dir); f != nil {
			chain = append([]ContextFile{*f}, chain...)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return append(out, chain...), errors.Join(errs...)
}
