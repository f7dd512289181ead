package skills

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode/utf16"
)

// The Agent Skills limits the reference checks (as warnings).
const (
	MaxNameLength        = 64
	MaxDescriptionLength = 1024
)

// Skill is one skill found.
type Skill struct {
	// Name is the front matter's name, else the folder's name.
	Name        string
	Description string
	// FilePath is the SKILL.md (or root-level .md) file; BaseDir its folder.
	FilePath, BaseDir string
	// AllowedTools is the front matter's allowed-tools, as written (the
	// reference reads it and does not enforce it; neither does pi).
	AllowedTools string
	// DisableModelInvocation keeps the skill out of the system prompt; it
	// is still usable with /skill:NAME.
	DisableModelInvocation bool
	// Source is "project" or "user"; Dir the skills folder it was found
	// in; Base the reference's base folder of that scope (the project's
	// .pi, PI_HOME), for SourceInfo.
	Source, Dir, Base string
}

// SourceInfo is where a skill or template came from, in the shape of the
// reference's sourceInfo (RPC get_commands).
type SourceInfo struct {
	Path    string `json:"path"`
	Source  string `json:"source"`
	Scope   string `json:"scope"`
	Origin  string `json:"origin"`
	BaseDir string `json:"baseDir"`
}

func sourceInfo(path, scope, base string) SourceInfo {
	return SourceInfo{Path: path, Source: "auto", Scope: scope, Origin: "top-level", BaseDir: base}
}

// SourceInfo is the skill's origin as the reference reports it.
func (s Skill) SourceInfo() SourceInfo { return sourceInfo(s.FilePath, s.Source, s.Base) }

// Diagnostic is a note on one file: a warning (the skill may still be
// loaded), a skip (it was not), or a shadowing (a skill of the same name
// was found first, in Winner).
type Diagnostic struct {
	Kind    string // "warning", "skipped" or "shadowed"
	Path    string
	Line    int // the front matter's line, for an unparseable one
	Message string
	Winner  string
}

func (d Diagnostic) String() string {
	loc := d.Path
	if d.Line > 0 {
		loc = fmt.Sprintf("%s:%d", d.Path, d.Line)
	}
	return fmt.Sprintf("%s: %s: %s", loc, d.Kind, d.Message)
}

// Dir is one folder searched for skills or templates.
type Dir struct {
	Path   string
	Source string // "project" or "user"
	// Base is the reference's base folder of the scope: the project's
	// .pi, or PI_HOME.
	Base string
	// RootFiles: a root-level .md file is a skill (pi's own folders; not
	// the .agents and .claude ones, as in the reference).
	RootFiles bool
}

var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9-]+$`) })

// jsLen is a string's length as JavaScript counts it (UTF-16 code units),
// so the limits warn where the reference's do.
func jsLen(s string) int { return len(utf16.Encode([]rune(s))) }

// checkName is the reference's name rules, as warnings.
func checkName(name, parent string) []string {
	var out []string
	if name != parent {
		out = append(out, fmt.Sprintf("name %q does not match parent directory %q", name, parent))
	}
	if n := jsLen(name); n > MaxNameLength {
		out = append(out, fmt.Sprintf("name exceeds %d characters (%d)", MaxNameLength, n))
	}
	if !validName().MatchString(name) {
		out = append(out, "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)")
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		out = append(out, "name must not start or end with a hyphen")
	}
	if strings.Contains(name, "--") {
		out = append(out, "name must not contain consecutive hyphens")
	}
	return out
}

// LoadFile reads one skill file as the reference does: the description is
// required (missing, empty or not a string: skipped); an invalid name or a
// description over MaxDescriptionLength is a warning and the skill loads;
// front matter that does not parse skips it, with its line.
func LoadFile(path string, d Dir) (*Skill, []Diagnostic) {
	var diags []Diagnostic
	skip := func(line int, msg string) (*Skill, []Diagnostic) {
		return nil, append(diags, Diagnostic{Kind: "skipped", Path: path, Line: line, Message: msg})
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return skip(0, err.Error())
	}
	fm, _, err := ParseFrontMatter(string(data))
	if err != nil {
		var fe *FrontMatterError
		if errors.As(err, &fe) {
			return skip(fe.Line, fe.Error())
		}
		return skip(0, err.Error())
	}
	base := filepath.Dir(path)
	parent := filepath.Base(base)
	desc, ok := stringField(fm, "description")
	if !ok {
		return skip(0, "description must be a string")
	}
	name, ok := stringField(fm, "name")
	if !ok {
		return skip(0, "name must be a string")
	}
	if name == "" {
		name = parent
	}
	warn := func(msg string) { diags = append(diags, Diagnostic{Kind: "warning", Path: path, Message: msg}) }
	if strings.TrimSpace(desc) == "" {
		for _, m := range checkName(name, parent) {
			warn(m)
		}
		return skip(0, "description is required")
	}
	if n := jsLen(desc); n > MaxDescriptionLength {
		warn(fmt.Sprintf("description exceeds %d characters (%d)", MaxDescriptionLength, n))
	}
	for _, m := range checkName(name, parent) {
		warn(m)
	}
	s := &Skill{Name: name, Description: desc, FilePath: path, BaseDir: base, Source: d.Source, Dir: d.Path, Base: d.Base}
	s.DisableModelInvocation = fm["disable-model-invocation"] == true
	switch v := fm["allowed-tools"].(type) {
	case string:
		s.AllowedTools = v
	case []any:
		var parts []string
		for _, p := range v {
			parts = append(parts, fmt.Sprint(p))
		}
		s.AllowedTools = strings.Join(parts, " ")
	}
	return s, diags
}

// skillFiles lists the skill files under dir as the reference collects
// them: a folder holding SKILL.md is a skill and is not searched further;
// otherwise its subfolders are (names starting with "." and node_modules
// left out), and in the top folder (with RootFiles) each .md file is a
// skill. Symbolic links are followed; broken ones are left out. Entries
// come in name order, as Node's readdir gives them.
func skillFiles(dir string, top, rootFiles bool) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if e.Name() == "SKILL.md" {
			if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && st.Mode().IsRegular() {
				return []string{filepath.Join(dir, e.Name())}
			}
		}
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "node_modules" {
			continue
		}
		full := filepath.Join(dir, name)
		st, err := os.Stat(full)
		if err != nil {
			continue
		}
		switch {
		case st.IsDir():
			out = append(out, skillFiles(full, false, rootFiles)...)
		case top && rootFiles && st.Mode().IsRegular() && strings.HasSuffix(name, ".md"):
			out = append(out, full)
		}
	}
	return out
}

// Load reads the skills of dirs in order; the first skill of a name wins,
// a later one is reported "shadowed"; a file reached twice (through a
// symbolic link) counts once.
func Load(dirs []Dir) ([]Skill, []Diagnostic) {
	var skills []Skill
	var diags, shadowed []Diagnostic
	byName := map[string]string{}
	seen := map[string]bool{}
	for _, d := range dirs {
		for _, f := range skillFiles(d.Path, true, d.RootFiles) {
			s, ds := LoadFile(f, d)
			diags = append(diags, ds...)
			if s == nil {
				continue
			}
			real, err := filepath.EvalSymlinks(f)
			if err != nil {
				real = f
			}
			if seen[real] {
				continue
			}
			if w, ok := byName[s.Name]; ok {
				shadowed = append(shadowed, Diagnostic{Kind: "shadowed", Path: f, Winner: w,
					Message: fmt.Sprintf("name %q collision: %s was found first", s.Name, w)})
				continue
			}
			byName[s.Name] = f
			seen[real] = true
			skills = append(skills, *s)
		}
	}
	return skills, append(diags, shadowed...)
}

// FormatForPrompt is the skills' block of the system prompt, in the
// reference's words: the skills with DisableModelInvocation left out; ""
// when none remains. It starts with two newlines.
func FormatForPrompt(skills []Skill) string {
	var b strings.Builder
	n := 0
	for _, s := range skills {
		if s.DisableModelInvocation {
			continue
		}
		if n == 0 {
			b.WriteString("\n\nThe following skills provide specialized instructions for specific tasks.\n" +
				"Use the read tool to load a skill's file when the task matches its description.\n" +
				"When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n" +
				"\n<available_skills>")
		}
		n++
		b.WriteString("\n  <skill>\n    <name>" + escapeXML(s.Name) + "</name>\n")
		b.WriteString("    <description>" + escapeXML(s.Description) + "</description>\n")
		b.WriteString("    <location>" + escapeXML(s.FilePath) + "</location>\n  </skill>")
	}
	if n == 0 {
		return ""
	}
	b.WriteString("\n</available_skills>")
	return b.String()
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func escapeXML(s string) string { return xmlEscaper.Replace(s) }

// Find returns the skill of that name.
func Find(skills []Skill, name string) (Skill, bool) {
	for _, s := range skills {
		if s.Name == name {
			return s, true
		}
	}
	return Skill{}, false
}

// ExpandCommand expands "/skill:NAME args" as the reference does: the
// skill's body (front matter removed, trimmed) in a <skill> element naming
// the skill and its file, a line saying what relative references are
// relative to, then the arguments (trimmed) after a blank line. ok is
// false when text is no /skill: command or names no known skill (the
// text then goes on as it is); err when the file cannot be read now.
func ExpandCommand(text string, skills []Skill) (out string, ok bool, err error) {
	rest, found := strings.CutPrefix(text, "/skill:")
	if !found {
		return text, false, nil
	}
	name, args, _ := strings.Cut(rest, " ")
	args = strings.TrimSpace(args)
	s, found := Find(skills, name)
	if !found {
		return text, false, nil
	}
	data, err := os.ReadFile(s.FilePath)
	if err != nil {
		return text, false, fmt.Errorf("skill %s: %w", s.Name, err)
	}
	_, body, err := ParseFrontMatter(string(data))
	if err != nil {
		return text, false, fmt.Errorf("skill %s: %s: %w", s.Name, s.FilePath, err)
	}
	block := "<skill name=\"" + s.Name + "\" location=\"" + s.FilePath + "\">\nReferences are relative to " +
		s.BaseDir + ".\n\n" + strings.TrimSpace(body) + "\n</skill>"
	if args != "" {
		return block + "\n\n" + args, true, nil
	}
	return block, true, nil
}
