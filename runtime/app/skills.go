package app

import "github.com/pi-go/pi/runtime/skills"

// SkillOptions say where this run looks for skills and prompt templates
// (config.Config.SkillOptions with --trust).
func (r *Runtime) SkillOptions() skills.Options {
	return r.cfg.SkillOptions(r.cwd, r.piHome, r.opts.Trust)
}
