package conversation

import (
	"context"
	"strings"

	"github.com/pi-go/pi/runtime/skills"
	"github.com/pi-go/pi/runtime/tool"
)

// The skills and prompt templates of a conversation (runtime/skills): found
// at New and again at each Reload (/reload, pi.reload, as the reference
// reloads its resources), where the runtime says (app.Runtime.SkillOptions); the
// skills' block goes into the system prompt (toolSet), `/skill:NAME args`
// and `/TEMPLATE args` are expanded before a prompt or a queued message
// goes to the model, as the reference expands them.

// SourceInfo is where a skill or template was found (skills.SourceInfo).
type SourceInfo = skills.SourceInfo

func (c *Conversation) loadResources() {
	set := skills.Discover(c.rt.SkillOptions())
	c.resources.Store(&set)
	// A skipped file is worth a warning; the lenient checks' warnings
	// (common in published skills) and shadowing are for `pi skills list`.
	for _, d := range set.Diagnostics {
		switch d.Kind {
		case "skipped":
			c.rt.Logger().Warn("skill or prompt template not loaded (see pi skills list)", "note", d.String())
		default:
			c.rt.Logger().Debug("skill or prompt template", "note", d.String())
		}
	}
}

// Skills are the skills and prompt templates found, with the notes on
// what was skipped or shadowed (for `pi skills list` and front ends).
func (c *Conversation) Skills() skills.Set { return *c.res() }

// res is the set of skills and templates now (a reload replaces it whole).
func (c *Conversation) res() *skills.Set { return c.resources.Load() }

// expand expands a /skill:NAME or /TEMPLATE line; ok is false (and text
// unchanged) for any other.
func (c *Conversation) expand(text string) (string, bool, error) {
	out, ok, err := skills.ExpandCommand(text, c.res().Skills)
	if err != nil {
		return text, false, err
	}
	if t, tok := skills.ExpandTemplate(out, c.res().Templates); tok {
		return t, true, nil
	}
	return out, ok, nil
}

// expandAndPrompt sends text to the model, expanded when it names a skill
// or a template (Submitted.Command then names it).
func (c *Conversation) expandAndPrompt(ctx context.Context, text string, images []tool.ContentBlock) (Submitted, error) {
	name := cutCommand(text)
	out, ok, err := c.expand(text)
	if err != nil {
		return Submitted{}, err
	}
	sub := Submitted{}
	if ok {
		sub.Command = name
	}
	return c.prompt(ctx, out, images, sub)
}

// cutCommand is the name of a "/name args" line as the reference reads it
// for skills and templates: up to the first space.
func cutCommand(text string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	return name
}

// resourceCommands are the templates (source "prompt") and the skills
// (skill:NAME, source "skill") as commands, in the reference's order.
func (c *Conversation) resourceCommands() []CommandInfo {
	var out []CommandInfo
	for _, t := range c.res().Templates {
		out = append(out, CommandInfo{Name: t.Name, Description: t.Description, ArgumentHint: t.ArgumentHint, Source: "prompt"})
	}
	for _, s := range c.res().Skills {
		out = append(out, CommandInfo{Name: "skill:" + s.Name, Description: s.Description, Source: "skill"})
	}
	return out
}
