package skills

import (
	"os"
	"path/filepath"
)

// Options say where to look.
type Options struct {
	// Cwd is the working directory; PIHome pi's home ($PI_HOME, the
	// reference's ~/.pi/agent); Home the user's home (~/.agents/skills,
	// ~/.claude/skills).
	Cwd, PIHome, Home string
	// ProjectTrusted loads the project's skills and templates (the
	// project's pi.toml is trusted, or --trust): they are instructions for
	// the model that the project's authors wrote.
	ProjectTrusted bool
	// Claude adds ~/.claude/skills and the project's .claude/skills
	// (pi.toml [skills] claude = true).
	Claude bool
}

// SkillDirs are the folders searched for skills, in the order the first of
// a name wins: the project's .pi/skills, .agents/skills in the working
// directory and each parent up to the git root (or the filesystem root
// outside a repository; ~/.agents/skills left to the user's turn), then
// .claude/skills (with Claude); then PIHome/skills, ~/.agents/skills and
// ~/.claude/skills (with Claude). The project's come first even when not
// trusted, with Project set, so a listing can say why they were left out.
func SkillDirs(o Options) []Dir {
	var out []Dir
	cwd, _ := filepath.Abs(o.Cwd)
	pbase := filepath.Join(cwd, ".pi")
	userAgents := ""
	if o.Home != "" {
		userAgents = filepath.Join(o.Home, ".agents", "skills")
	}
	out = append(out, Dir{Path: filepath.Join(cwd, ".pi", "skills"), Source: "project", Base: pbase, RootFiles: true})
	root := gitRoot(cwd)
	for dir := cwd; ; {
		if p := filepath.Join(dir, ".agents", "skills"); p != userAgents {
			out = append(out, Dir{Path: p, Source: "project", Base: pbase})
		}
		parent := filepath.Dir(dir)
		if (root != "" && dir == root) || parent == dir {
			break
		}
		dir = parent
	}
	if o.Claude {
		out = append(out, Dir{Path: filepath.Join(cwd, ".claude", "skills"), Source: "project", Base: pbase})
	}
	if o.PIHome != "" {
		out = append(out, Dir{Path: filepath.Join(o.PIHome, "skills"), Source: "user", Base: o.PIHome, RootFiles: true})
	}
	if userAgents != "" {
		out = append(out, Dir{Path: userAgents, Source: "user", Base: o.PIHome})
		if o.Claude {
			out = append(out, Dir{Path: filepath.Join(o.Home, ".claude", "skills"), Source: "user", Base: o.PIHome})
		}
	}
	return out
}

// PromptDirs are the folders of prompt templates, the first of a name
// winning: the project's .pi/prompts, then PIHome/prompts.
func PromptDirs(o Options) []Dir {
	cwd, _ := filepath.Abs(o.Cwd)
	pbase := filepath.Join(cwd, ".pi")
	out := []Dir{{Path: filepath.Join(cwd, ".pi", "prompts"), Source: "project", Base: pbase}}
	if o.PIHome != "" {
		out = append(out, Dir{Path: filepath.Join(o.PIHome, "prompts"), Source: "user", Base: o.PIHome})
	}
	return out
}

// gitRoot is the nearest folder from dir up holding a .git entry; "" when
// there is none.
func gitRoot(dir string) string {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Set is what Discover found.
type Set struct {
	Skills    []Skill
	Templates []Template
	// Diagnostics: warnings, skipped and shadowed files, and the project
	// folders left out because the project is not trusted.
	Diagnostics []Diagnostic
}

// Discover finds the skills and templates for o. The project's folders are
// read only when o.ProjectTrusted; a project folder that exists is
// otherwise reported skipped ("project not trusted").
func Discover(o Options) Set {
	var set Set
	keep := func(dirs []Dir) []Dir {
		var out []Dir
		for _, d := range dirs {
			if d.Source == "project" && !o.ProjectTrusted {
				if st, err := os.Stat(d.Path); err == nil && st.IsDir() {
					set.Diagnostics = append(set.Diagnostics, Diagnostic{Kind: "skipped", Path: d.Path,
						Message: "project not trusted (trust its pi.toml with `pi trust`, or pass --trust)"})
				}
				continue
			}
			out = append(out, d)
		}
		return out
	}
	sk, ds := Load(keep(SkillDirs(o)))
	set.Skills = sk
	set.Diagnostics = append(set.Diagnostics, ds...)
	ts, tds := LoadTemplates(keep(PromptDirs(o)))
	set.Templates = ts
	set.Diagnostics = append(set.Diagnostics, tds...)
	return set
}
