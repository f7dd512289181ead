package manage

import (
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/skills"
)

// SkillsReport is what `pi skills list` shows: the skills and prompt
// templates a run in the scope's folder would load, the notes on the
// others, and where and whether the project's were read.
type SkillsReport struct {
	skills.Set
	Options skills.Options
	// ProjectFile is the project's pi.toml ("" when there is none).
	ProjectFile string
}

// Skills finds the skills and templates as a run in scope.Cwd would (trust:
// --trust for this run).
//
// # Errors
//
// A pi.toml that does not load.
func Skills(scope Scope, trust bool) (SkillsReport, error) {
	cwd, err := config.WorkingDir(scope.Cwd)
	if err != nil {
		return SkillsReport{}, err
	}
	home := scope.home()
	cfg, err := config.Load(config.LoadOptions{Cwd: cwd, PIHome: home, Trust: trust})
	if err != nil {
		return SkillsReport{}, err
	}
	o := cfg.SkillOptions(cwd, home, trust)
	return SkillsReport{Set: skills.Discover(o), Options: o, ProjectFile: cfg.ProjectFile}, nil
}
