package config

import (
	"os"

	"github.com/pi-go/pi/runtime/skills"
)

// Skills is the [skills] table (runtime/skills finds and reads them).
type Skills struct {
	// Claude adds ~/.claude/skills and the project's .claude/skills to
	// the folders searched (claude = true; default false).
	Claude bool
}

var skillsKeys = []string{"claude"}

func (d *decoder) skills(l *layer, v any) {
	m, ok := d.table("skills", v, skillsKeys)
	if !ok {
		return
	}
	if v, ok := m["claude"]; ok {
		if b, ok := d.boolean("skills.claude", v); ok {
			l.skillsClaude = &b
		}
	}
}

func (l *layer) applySkills(c *Config) {
	if l.skillsClaude != nil {
		c.Skills.Claude = *l.skillsClaude
	}
}

// ProjectContentTrusted reports whether the project's own instructions for
// the model (its skills, prompt templates and agent definitions) may load: trusted for this
// run (flag: --trust, PI_TRUST=1), or the project's pi.toml is trusted and
// unchanged since (IsTrusted). Without a pi.toml only the flag trusts it.
func (c *Config) ProjectContentTrusted(piHome string, flag bool) bool {
	if flag {
		return true
	}
	if c.ProjectFile == "" {
		return false
	}
	ok, err := IsTrusted(piHome, c.ProjectFile)
	return err == nil && ok
}

// SkillOptions say where runtime/skills looks for a run in cwd (absolute)
// with this configuration: PI_HOME, the user's home, the project's trust
// (ProjectContentTrusted with trustFlag) and [skills] claude. The runtime
// and `pi skills list` both ask it, so they cannot disagree.
func (c *Config) SkillOptions(cwd, piHome string, trustFlag bool) skills.Options {
	home, _ := os.UserHomeDir()
	return skills.Options{
		Cwd: cwd, PIHome: piHome, Home: home,
		ProjectTrusted: c.ProjectContentTrusted(piHome, trustFlag),
		Claude:         c.Skills.Claude,
	}
}
