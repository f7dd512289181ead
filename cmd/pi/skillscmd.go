package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/runtime/manage"
)

const skillsUsage = `
Usage: pi skills list [--json] [--cwd DIR] [--trust]

Lists the Agent Skills and prompt templates a run in this folder loads
(docs/skills.md, docs/prompts.md), each with where it was found; then every
file that was skipped (front matter that does not parse, with its line; no
description), loaded with a warning (an invalid name, a description over
1024 characters) or shadowed by a skill or template of the same name found
first, and the project folders left out because the project is not
trusted. A project's skills and templates load only when its pi.toml is
trusted ('pi trust') or with --trust (PI_TRUST=1) for one run.
`

func cmdSkills(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprintln(stderr, strings.TrimSpace(skillsUsage))
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] != "list" && args[0] != "ls" {
		return usageError(stderr, "skills", "unknown subcommand %q (the subcommand is 'list')", args[0])
	}
	var asJSON, trust bool
	var cwd string
	fs := newFlagSet("pi skills list", skillsUsage, stdout, stderr)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	fs.BoolVar(&trust, "trust", false, "trust the project for this listing, as --trust does for a run (also PI_TRUST=1)")
	fs.StringVar(&cwd, "cwd", "", "act as if run in `DIR`")
	pos, code, done := parseArgs(fs, args[1:])
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageError(stderr, "skills list", "unexpected argument %q", pos[0])
	}
	rep, err := manage.Skills(manage.Scope{Cwd: resolveCwd(cwd)}, trust || os.Getenv("PI_TRUST") == "1")
	if err != nil {
		fmt.Fprintf(stderr, "pi skills list: %v\n", err)
		return exitError
	}
	if asJSON {
		enc := json.NewEncoder(termtext.NewJSONWriter(stdout))
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		enc.Encode(skillsJSON(rep))
		return exitOK
	}
	writeSkills(stdout, rep)
	return exitOK
}

func writeSkills(w io.Writer, rep manage.SkillsReport) {
	if len(rep.Skills) == 0 {
		fmt.Fprintln(w, "No skills found.")
	} else {
		fmt.Fprintln(w, "Skills (the first found of a name wins):")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, s := range rep.Skills {
			note := ""
			if s.DisableModelInvocation {
				note = "\t(only by /skill:" + s.Name + ", not in the system prompt)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s%s\n", s.Name, s.Source, s.FilePath, note)
		}
		tw.Flush()
	}
	if len(rep.Templates) == 0 {
		fmt.Fprintln(w, "No prompt templates found.")
	} else {
		fmt.Fprintln(w, "Prompt templates:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, t := range rep.Templates {
			fmt.Fprintf(tw, "  /%s\t%s\t%s\n", t.Name, t.Source, t.FilePath)
		}
		tw.Flush()
	}
	if len(rep.Diagnostics) > 0 {
		fmt.Fprintln(w, "Notes:")
		for _, d := range rep.Diagnostics {
			fmt.Fprintln(w, "  "+d.String())
		}
	}
	switch {
	case rep.Options.ProjectTrusted:
		fmt.Fprintln(w, "The project's skills and templates are loaded (the project is trusted).")
	case rep.ProjectFile == "":
		fmt.Fprintln(w, "The project's skills and templates are not loaded: there is no pi.toml to trust (create one and run 'pi trust', or pass --trust).")
	default:
		fmt.Fprintf(w, "The project's skills and templates are not loaded: %s is not trusted (review it, then run 'pi trust', or pass --trust).\n", rep.ProjectFile)
	}
}

// skillsJSON is the listing as JSON.
func skillsJSON(rep manage.SkillsReport) any {
	type skill struct {
		Name         string `json:"name"`
		Description  string `json:"description"`
		File         string `json:"file"`
		Source       string `json:"source"`
		AllowedTools string `json:"allowedTools,omitempty"`
		Hidden       bool   `json:"disableModelInvocation,omitempty"`
	}
	type template struct {
		Name         string `json:"name"`
		Description  string `json:"description"`
		ArgumentHint string `json:"argumentHint,omitempty"`
		File         string `json:"file"`
		Source       string `json:"source"`
	}
	type note struct {
		Kind    string `json:"kind"`
		File    string `json:"file"`
		Line    int    `json:"line,omitempty"`
		Message string `json:"message"`
		Winner  string `json:"winner,omitempty"`
	}
	out := struct {
		Skills         []skill    `json:"skills"`
		Templates      []template `json:"templates"`
		Notes          []note     `json:"notes"`
		ProjectTrusted bool       `json:"projectTrusted"`
	}{Skills: []skill{}, Templates: []template{}, Notes: []note{}, ProjectTrusted: rep.Options.ProjectTrusted}
	for _, s := range rep.Skills {
		out.Skills = append(out.Skills, skill{s.Name, s.Description, s.FilePath, s.Source, s.AllowedTools, s.DisableModelInvocation})
	}
	for _, t := range rep.Templates {
		out.Templates = append(out.Templates, template{t.Name, t.Description, t.ArgumentHint, t.FilePath, t.Source})
	}
	for _, d := range rep.Diagnostics {
		out.Notes = append(out.Notes, note{d.Kind, d.Path, d.Line, d.Message, d.Winner})
	}
	return out
}
