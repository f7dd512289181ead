package manage

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/tools/builtin"
)

// activeFor says how the new tools names stand against the [tools] active
// that applies in the scope's cwd and, with activate, adds the ones it
// leaves out to that list (in the file that sets it, keeping trust).
func activeFor(s Scope, names []string, activate bool) Active {
	cfg, err := config.Load(config.LoadOptions{Cwd: s.Cwd, PIHome: s.PIHome, Trust: true})
	if err != nil || cfg.Tools.Active == nil {
		return Active{}
	}
	a := Active{ActiveAt: cfg.Tools.ActiveAt}
	for _, n := range names {
		if !slices.Contains(cfg.Tools.Active, n) {
			a.Off = append(a.Off, n)
		}
	}
	if len(a.Off) == 0 || !activate {
		return a
	}
	file := cfg.Tools.ActiveAt
	if i := strings.LastIndexByte(file, ':'); i > 0 {
		file = file[:i]
	}
	f := tomlFile{home: s.home(), path: file, scope: config.ScopeGlobal}
	if file == cfg.ProjectFile {
		f.scope = config.ScopeProject
	}
	a.ActiveFile = file
	_, _, a.ActivateErr = editKeepingTrust(f, "activated", func() error {
		added, err := config.AddActiveTools(file, a.Off)
		a.Activated = added
		return err
	})
	if a.ActivateErr == nil {
		a.Off = nil
	}
	return a
}

// checkToolClash refuses an extension whose tool has the name of a
// built-in tool or of a tool of another configured extension (global or
// the project's): every later run would refuse to register it ("already
// registered by builtin") unless the entry has override = true.
func checkToolClash(ctx context.Context, t target, info ExtensionInfo) error {
	var builtins []string
	for _, d := range builtin.Definitions(builtin.Options{}) {
		builtins = append(builtins, d.Name)
	}
	for _, tl := range info.Tools {
		if slices.Contains(builtins, tl.Name) {
			return fmt.Errorf("extension %s: its tool %q has the name of a built-in tool, so every run would refuse to register it; install with --override to let it replace the built-in %s", info.Name, tl.Name, tl.Name)
		}
	}
	cfg, err := config.Load(config.LoadOptions{Cwd: t.cwd, PIHome: t.home, Trust: true})
	if err != nil {
		return err
	}
	for _, e := range cfg.Extensions {
		if e.Name == info.Name {
			continue // the same name is refused by the install itself
		}
		for _, n := range declaredTools(ctx, t, e) {
			if slices.ContainsFunc(info.Tools, func(ts extensions.ToolSpec) bool { return ts.Name == n }) {
				return fmt.Errorf("extension %s: its tool %q has the name of a tool of the extension %s (%s:%d), so every run would refuse to register one of them; install with --override to let it replace that tool", info.Name, n, e.Name, e.File, e.Line)
			}
		}
	}
	return nil
}

// declaredTools names the tools of a configured extension: from the record
// of what its pinned module declared, else by inspecting the module; none
// when it cannot be inspected (it does not load then anyway).
func declaredTools(ctx context.Context, t target, e config.Extension) []string {
	info, ok := extensions.LoadDeclared(config.DeclaredDir(t.home), e.SHA256)
	if !ok {
		var err error
		info, err = extensions.Inspect(ctx, e.Path, inspectOptions(t.home, t.cwd))
		if err != nil {
			return nil
		}
	}
	var names []string
	for _, tl := range info.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// inspectOptions are the host options of a quiet inspection (listings,
// the clash check): no log, the compilation cache of home unless it is
// refused (config.TrustedCacheDir; a run says why).
func inspectOptions(home, cwd string) extensions.Options {
	cache, _ := config.TrustedCacheDir(home)
	return extensions.Options{CacheDir: cache, Logger: hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Off}), ProjectRoot: cwd, Cwd: cwd, HostName: "pi", Mode: extensions.ModeInspect}
}
