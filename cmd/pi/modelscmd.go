package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/models"
)

const modelsUsage = `
Usage: pi models [--provider NAME] [--all] [--json]

Lists the providers pi knows (its built-in catalogue and
$PI_HOME/models.json) and whether each can be used now: a provider needs its
API key (the variable to set is named) and an API this version talks. The
models of every usable provider follow, one per line: PROVIDER/ID, context
window, price per million tokens (input/output), "reasoning" when the model
takes a thinking level. --provider lists that provider's models, --all every
model. Use one with --model PROVIDER/ID, /model, or [model] provider and name
in pi.toml (docs/models.md).
`

func cmdModels(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("pi models", modelsUsage, stdout, stderr)
	prov := fs.String("provider", "", "list the models of `PROVIDER`")
	all := fs.Bool("all", false, "list every model, usable or not")
	asJSON := fs.Bool("json", false, "print a JSON array of models, each with usable and why")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageError(stderr, "models", "unexpected argument %q", pos[0])
	}
	reg, err := app.LoadModels("")
	if err != nil {
		fmt.Fprintf(stderr, "pi models: %v\n", err)
		return exitError
	}
	provs := reg.Providers
	if *prov != "" {
		p := reg.Provider(*prov)
		if p == nil {
			names := make([]string, len(reg.Providers))
			for i, p := range reg.Providers {
				names[i] = p.Name
			}
			return usageError(stderr, "models", "unknown provider %q (known: %s)", *prov, strings.Join(names, ", "))
		}
		provs = []*models.Provider{p}
	}
	if *asJSON {
		type row struct {
			models.Model
			Usable bool   `json:"usable"`
			Why    string `json:"why,omitempty"`
		}
		rows := []row{}
		for _, p := range provs {
			for _, m := range p.Models {
				r := row{Model: m, Usable: true}
				if err := app.ModelUsable(reg, m); err != nil {
					r.Usable, r.Why = false, err.Error()
				}
				rows = append(rows, r)
			}
		}
		b, _ := json.MarshalIndent(rows, "", "  ")
		fmt.Fprintln(termtext.NewJSONWriter(stdout), string(b))
		return exitOK
	}
	for _, p := range provs {
		status := "usable"
		var why error
		for _, m := range p.Models {
			if why = app.ModelUsable(reg, m); why == nil {
				break
			}
		}
		if why != nil {
			status = why.Error()
		}
		src := "built in"
		if !p.Builtin {
			src = "models.json"
		} else if reg.File != "" && p.APIKey != "" {
			src = "built in, models.json"
		}
		fmt.Fprintf(stdout, "%-12s %-22s %3d models  %s  (%s)\n", p.Name, p.API, len(p.Models), status, src)
	}
	for _, p := range provs {
		for _, m := range p.Models {
			err := app.ModelUsable(reg, m)
			if err != nil && !*all && *prov == "" {
				continue
			}
			line := fmt.Sprintf("  %-50s %8s  $%s/$%s", m.Ref(), tokens(m.ContextWindow), price(m.Cost.Input), price(m.Cost.Output))
			if m.Reasoning {
				line += "  reasoning"
			}
			if err != nil {
				line += "  (" + err.Error() + ")"
			}
			fmt.Fprintln(stdout, line)
		}
	}
	return exitOK
}

// tokens is "200k", "1M", "8192".
func tokens(n int) string {
	switch {
	case n >= 1000000 && n%1000000 == 0:
		return strconv.Itoa(n/1000000) + "M"
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

func price(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }
