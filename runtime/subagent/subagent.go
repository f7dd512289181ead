// Package subagent finds and reads the definitions of sub-agents: Markdown
// files whose YAML front matter names an agent (name, description, tools,
// model, thinking) and whose body is its system prompt, in pi's folders
// ($PI_HOME/agents, .pi/agents) and, when enabled, Claude Code's
// (~/.claude/agents, .claude/agents) read as they are. The task tool that
// runs them is runtime/conversation's (task.go); see docs/agents.md.
package subagent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/pi-go/pi/internal/frontmatter"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/models"
)

// Sources of a definition, from the weakest to the strongest: a later one
// takes the place of an earlier one of the same name.
const (
	SourceClaudeUser    = "claude-user"    // ~/.claude/agents
	SourceUser          = "user"           // $PI_HOME/agents
	SourceClaudeProject = "claude-project" // .claude/agents
	SourceProject       = "project"        // .pi/agents
)

// Definition is one agent.
type Definition struct {
	Name        string
	Description string
	// Tools are the tool names the agent may use (always only those the
	// parent has active too); nil means all of the parent's, empty none.
	Tools []string
	// Model names the agent's model ("" is the parent's); Claude Code's
	// "inherit" is "". Thinking is its thinking level ("" is the parent's).
	Model, Thinking string
	// SystemPrompt is the file's body, added after pi's system prompt.
	SystemPrompt string
	// File is the definition's path; Source one of the Source constants.
	File, Source string
	// Claude says the file is in Claude Code's format: its tool names are
	// mapped to pi's, and a model pi cannot resolve falls back to the
	// parent's (its aliases sonnet, opus, haiku name Anthropic models).
	Claude bool
}

// Problem is a file that was skipped or shadowed, and why.
type Problem struct {
	File string
	Msg  string // with the file and line when known
}

// Set is what Load found.
type Set struct {
	// Agents by name, sorted by name.
	Agents []Definition
	// Skipped are files that define no agent; Shadowed are definitions
	// another of the same name replaced.
	Skipped, Shadowed []Problem
}

// Find returns the agent named name.
func (s *Set) Find(name string) (Definition, bool) {
	if s == nil {
		return Definition{}, false
	}
	i := slices.IndexFunc(s.Agents, func(d Definition) bool { return d.Name == name })
	if i < 0 {
		return Definition{}, false
	}
	return s.Agents[i], true
}

// Names are the agents' names.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s.Agents))
	for i, d := range s.Agents {
		out[i] = d.Name
	}
	return out
}

// LoadOptions say where to look.
type LoadOptions struct {
	// PIHome holds agents/ (the user's definitions).
	PIHome string
	// Home is the user's home folder (for ~/.claude/agents); "" skips it.
	Home string
	// Cwd and ProjectRoot bound the search for .pi/agents (and
	// .claude/agents): the nearest one from Cwd up to ProjectRoot.
	Cwd, ProjectRoot string
	// Project loads the project's definitions (the project is trusted:
	// an agent's prompt and tools are instructions for the model).
	Project bool
	// Claude reads Claude Code's folders too ([agents] claude = true).
	Claude bool
}

// Load reads the definitions of every folder o names. A folder that does
// not exist is no error; a file that cannot be read or parsed is Skipped
// with the reason.
func Load(o LoadOptions) *Set {
	type dir struct{ path, source string }
	var dirs []dir
	if o.Claude && o.Home != "" {
		dirs = append(dirs, dir{filepath.Join(o.Home, ".claude", "agents"), SourceClaudeUser})
	}
	if o.PIHome != "" {
		dirs = append(dirs, dir{filepath.Join(o.PIHome, "agents"), SourceUser})
	}
	if o.Project {
		if o.Claude {
			if p := nearest(o.Cwd, o.ProjectRoot, filepath.Join(".claude", "agents")); p != "" {
				dirs = append(dirs, dir{p, SourceClaudeProject})
			}
		}
		if p := nearest(o.Cwd, o.ProjectRoot, filepath.Join(".pi", "agents")); p != "" {
			dirs = append(dirs, dir{p, SourceProject})
		}
	}
	s := &Set{}
	byName := map[string]int{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d.path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				s.Skipped = append(s.Skipped, Problem{File: d.path, Msg: err.Error()})
			}
			continue
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".md") || e.IsDir() {
				continue
			}
			path := filepath.Join(d.path, e.Name())
			data, err := config.ReadSafeFile(path, "agent definition")
			if err != nil {
				s.Skipped = append(s.Skipped, Problem{File: path, Msg: err.Error()})
				continue
			}
			def, err := Parse(path, data, d.source)
			if err != nil {
				s.Skipped = append(s.Skipped, Problem{File: path, Msg: err.Error()})
				continue
			}
			if i, ok := byName[def.Name]; ok {
				old := s.Agents[i]
				s.Shadowed = append(s.Shadowed, Problem{File: old.File, Msg: fmt.Sprintf("%s: agent %q is replaced by %s", old.File, def.Name, def.File)})
				s.Agents[i] = def
				continue
			}
			byName[def.Name] = len(s.Agents)
			s.Agents = append(s.Agents, def)
		}
	}
	sort.Slice(s.Agents, func(i, j int) bool { return s.Agents[i].Name < s.Agents[j].Name })
	return s
}

// nearest is the folder rel in cwd or its nearest parent up to root (cwd
// alone when root does not hold it); "" when none exists.
func nearest(cwd, root, rel string) string {
	if cwd == "" {
		return ""
	}
	for dir := filepath.Clean(cwd); ; {
		p := filepath.Join(dir, rel)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if root == "" || dir == filepath.Clean(root) || parent == dir || !within(parent, root) {
			return ""
		}
		dir = parent
	}
}

func within(dir, root string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// claudeTools maps Claude Code's tool names to pi's; a name not here is
// kept as it is (an extension's or MCP tool may carry it).
var claudeTools = map[string]string{
	"read": "read", "write": "write", "edit": "edit", "multiedit": "edit",
	"bash": "bash", "grep": "grep", "glob": "find", "ls": "ls",
}

// frontMatter is a definition's front matter as written.
type frontMatter struct {
	Name        string           `yaml:"name"`
	Description string           `yaml:"description"`
	Tools       frontmatter.Node `yaml:"tools"`
	Model       string           `yaml:"model"`
	Thinking    string           `yaml:"thinking"`
}

// Parse reads one definition (source says which folder it came from,
// hence its format). A missing name or description is an error, as is
// front matter that does not parse (at its file:line).
func Parse(file string, data []byte, source string) (Definition, error) {
	var fm frontMatter
	claude := source == SourceClaudeUser || source == SourceClaudeProject
	doc, err := frontmatter.Split(file, data)
	if err != nil {
		return Definition{}, err
	}
	if err := doc.Decode(&fm); err != nil {
		// Claude Code's own files often hold descriptions that are not
		// valid YAML (an unquoted "Examples: user: ..."), which its older
		// versions took: read those line by line.
		lenient, ok := claudeLines(doc.YAML)
		if !claude || !ok {
			return Definition{}, err
		}
		fm = lenient
	}
	if !doc.HasFrontMatter {
		return Definition{}, fmt.Errorf("%s:1: no front matter (a block between lines \"---\" naming the agent and describing it)", file)
	}
	def := Definition{
		Name: strings.TrimSpace(fm.Name), Description: strings.TrimSpace(fm.Description),
		Model: strings.TrimSpace(fm.Model), SystemPrompt: doc.Body, File: file, Source: source, Claude: claude,
	}
	switch {
	case def.Name == "":
		return Definition{}, fmt.Errorf("%s:1: front matter has no name", file)
	case def.Description == "":
		return Definition{}, fmt.Errorf("%s:1: front matter has no description", file)
	case strings.ContainsAny(def.Name, " \t\n/\\"):
		return Definition{}, fmt.Errorf("%s:1: name %q has white space or a slash", file, def.Name)
	}
	if t := strings.TrimSpace(fm.Thinking); t != "" {
		l, ok := models.ParseLevel(t)
		if !ok {
			return Definition{}, fmt.Errorf("%s:1: thinking %q is not a thinking level (off, minimal, low, medium, high, xhigh)", file, t)
		}
		def.Thinking = string(l)
	}
	if claude && strings.EqualFold(def.Model, "inherit") {
		def.Model = ""
	}
	tools, err := toolNames(doc, &fm.Tools)
	if err != nil {
		return Definition{}, err
	}
	if tools != nil && claude {
		mapped := []string{}
		for _, t := range tools {
			if n, ok := claudeTools[strings.ToLower(t)]; ok {
				t = n
			}
			if !slices.Contains(mapped, t) {
				mapped = append(mapped, t)
			}
		}
		tools = mapped
	}
	def.Tools = tools
	return def, nil
}

// toolNames reads tools: a comma-separated string (the reference's and
// Claude Code's form) or a list; nil when not set.
func toolNames(doc frontmatter.Document, n *frontmatter.Node) ([]string, error) {
	if n.Kind == 0 {
		return nil, nil
	}
	var raw []string
	switch {
	case n.Tag == "!!null":
		return nil, nil
	case n.Kind == frontmatter.ScalarNode && strings.TrimSpace(n.Value) == "":
		return nil, nil // as the reference: no names, all tools
	case n.Kind == frontmatter.ScalarNode:
		raw = strings.Split(n.Value, ",")
	case n.Kind == frontmatter.SequenceNode:
		for _, c := range n.Content {
			if c.Kind != frontmatter.ScalarNode {
				return nil, fmt.Errorf("%s:%d: tools: each tool is a name", doc.File, doc.Line(c))
			}
			raw = append(raw, c.Value)
		}
	default:
		return nil, fmt.Errorf("%s:%d: tools: a comma-separated list of names, or a list", doc.File, doc.Line(n))
	}
	out := []string{}
	for _, t := range raw {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// claudeKeys are the keys of Claude Code's subagent front matter: in the
// line-by-line reading, a line "KEY: value" starts a key only for these;
// any other line goes on the value before it.
var claudeKeys = []string{"name", "description", "tools", "disallowedTools", "model", "permissionMode", "skills", "hooks", "color", "thinking", "disabled"}

// claudeLines reads front matter that is not valid YAML the way a person
// reads it: "KEY: value" lines, each value going on over the lines that
// follow until the next key (a list of "- item" lines for tools). ok is
// false when no name and description come out of it.
func claudeLines(text string) (fm frontMatter, ok bool) {
	vals := map[string][]string{}
	key := ""
	for _, line := range strings.Split(text, "\n") {
		if k, v, found := strings.Cut(line, ":"); found && slices.Contains(claudeKeys, k) {
			key = k
			vals[k] = []string{strings.TrimSpace(v)}
			continue
		}
		if key != "" {
			vals[key] = append(vals[key], line)
		}
	}
	text1 := func(k string) string {
		v := strings.TrimSpace(strings.Join(vals[k], "\n"))
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		return v
	}
	fm.Name, fm.Description, fm.Model, fm.Thinking = text1("name"), text1("description"), text1("model"), text1("thinking")
	if t, set := vals["tools"]; set {
		fm.Tools = frontmatter.Node{Kind: frontmatter.ScalarNode, Value: t[0]}
		if t[0] == "" {
			fm.Tools = frontmatter.Node{Kind: frontmatter.SequenceNode}
			for _, item := range t[1:] {
				if item = strings.TrimSpace(item); strings.HasPrefix(item, "- ") {
					fm.Tools.Content = append(fm.Tools.Content, &frontmatter.Node{Kind: frontmatter.ScalarNode, Value: strings.TrimSpace(item[2:])})
				}
			}
			if len(fm.Tools.Content) == 0 {
				fm.Tools = frontmatter.Node{}
			}
		}
	}
	return fm, fm.Name != "" && fm.Description != ""
}
