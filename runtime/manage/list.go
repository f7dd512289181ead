package manage

import (
	"context"
	"fmt"
	"sort"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/config"
)

// ConfiguredExtension is one [[extensions]] entry as `pi ext list` shows
// it: what pi.toml says, and what inspecting the module found.
type ConfiguredExtension struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Tools   []string `json:"tools"`
	Hooks   []string `json:"hooks"`
	// Commands are its slash commands, without the slash (ABI 1.1).
	Commands []string `json:"commands"`
	Grants   Grants   `json:"grants"`
	SHA256   string   `json:"sha256"`
	Scope    string   `json:"scope"`
	Path     string   `json:"path"`
	File     string   `json:"configFile"`
	// Trusted is false for a project extension of an untrusted project
	// (it does not load).
	Trusted bool `json:"trusted"`
	// Problem says why the module would not load ("" when it would).
	Problem string `json:"error,omitempty"`
}

// listing is the global and the project pi.toml as a listing shows them:
// the project's settings even when it is not trusted, and whether it is.
type listing struct {
	cwd, home string
	cfg       *config.Config
	trusted   bool
}

func (s Scope) listing() (listing, error) {
	cwd, err := config.WorkingDir(s.Cwd)
	if err != nil {
		return listing{}, err
	}
	l := listing{cwd: cwd, home: s.home(), trusted: true}
	if l.cfg, err = config.Load(config.LoadOptions{Cwd: cwd, PIHome: l.home, Trust: true}); err != nil {
		return listing{}, err
	}
	if l.cfg.ProjectFile != "" {
		// A listing shows what would load: a trust that cannot be read is
		// no trust.
		l.trusted, _ = config.IsTrusted(l.home, l.cfg.ProjectFile)
	}
	return l, nil
}

// ListExtensions lists the [[extensions]] entries of the global and the
// project pi.toml (global first), each checked: its file's sha256 against
// pi.toml, then the module inspected in a sandbox. A project's entries are
// listed even when it is not trusted.
func ListExtensions(ctx context.Context, scope Scope) ([]ConfiguredExtension, error) {
	l, err := scope.listing()
	if err != nil {
		return nil, err
	}
	cfg := l.cfg
	entries := []ConfiguredExtension{}
	for _, e := range cfg.Extensions {
		en := ConfiguredExtension{Name: e.Name, Grants: nonNilGrants(e.Grants),
			SHA256: e.SHA256, Scope: e.Scope, Path: e.Path, File: e.File, Trusted: e.Scope != config.ScopeProject || l.trusted,
			Tools: []string{}, Hooks: []string{}, Commands: []string{}}
		if sum, err := extensions.FileSHA256(e.Path); err != nil {
			en.Problem = err.Error()
		} else if sum != e.SHA256 {
			update := "pi ext update " + e.Name
			if e.Scope == config.ScopeGlobal {
				update += " --global"
			}
			en.Problem = fmt.Sprintf("disabled: sha256 of %s is %s, pi.toml says %s: the file changed since it was installed (if you rebuilt it, pin the new build with %s)", e.Path, sum, e.SHA256, update)
		} else if info, err := extensions.Inspect(ctx, e.Path, inspectOptions(l.home, l.cwd)); err != nil {
			en.Problem = err.Error()
		} else {
			en.Version = info.Version
			for _, t := range info.Tools {
				en.Tools = append(en.Tools, t.Name)
			}
			en.Hooks = append(en.Hooks, info.Hooks...)
			for _, c := range info.Commands {
				en.Commands = append(en.Commands, c.Name)
			}
			if info.ConfigSchema != nil {
				if err := extensions.ValidateConfig(info.ConfigSchema, e.Config, config.ExtensionConfigKey(cfg.Extensions, e)); err != nil {
					en.Problem = err.Error()
				}
			}
		}
		entries = append(entries, en)
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Scope < entries[j].Scope })
	return entries, nil
}

// nonNilGrants returns g with empty lists instead of nil ones, so that
// `pi ext list --json` writes [] and never null.
func nonNilGrants(g Grants) Grants {
	for _, l := range []*[]string{&g.FS, &g.Exec, &g.Env} {
		if *l == nil {
			*l = []string{}
		}
	}
	return g
}
