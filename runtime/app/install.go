package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/runtime/config"
)

// ExtensionScope says which pi.toml an install or removal edits.
type ExtensionScope struct {
	// Cwd is where the project's pi.toml is searched from ("" for the
	// process's working directory).
	Cwd string
	// PIHome is "" for config.DefaultPIHome().
	PIHome string
	// Global edits $PI_HOME/pi.toml instead of the project's.
	Global bool
}

// extTarget is where an install or removal writes: the pi.toml and the
// folder the .wasm files go to.
type extTarget struct {
	home, cwd, toml, dir, scope string
}

func (s ExtensionScope) target() (extTarget, error) {
	cwd, err := WorkingDir(s.Cwd)
	if err != nil {
		return extTarget{}, err
	}
	home := firstNonEmpty(s.PIHome, config.DefaultPIHome())
	if s.Global {
		return extTarget{home: home, cwd: cwd, toml: filepath.Join(home, config.FileName), dir: filepath.Join(home, "extensions"), scope: config.ScopeGlobal}, nil
	}
	// The folder of the project's pi.toml, else the project root (the
	// nearest folder with .git or .pi/), else cwd: where a later load finds
	// the file again.
	cfg, err := config.Load(config.LoadOptions{Cwd: cwd, PIHome: home, Trust: true})
	if err != nil {
		return extTarget{}, err
	}
	root := cfg.ProjectRoot
	return extTarget{home: home, cwd: cwd, toml: filepath.Join(root, config.FileName), dir: filepath.Join(root, ".pi", "extensions"), scope: config.ScopeProject}, nil
}

// InstallRequest is one `pi ext install`.
type InstallRequest struct {
	ExtensionScope
	// Source is the .wasm file to install.
	Source string
	// Override lets its tools replace built-in tools of the same name.
	Override bool
	Grants   config.Grants
	Limits   config.Limits
	// Config is the entry's [extensions.config] (--ext-config,
	// --ext-config-file; see config.ParseExtensionConfig); nil for none.
	// The module is inspected with it, so an init that refuses it refuses
	// the install.
	Config map[string]any
	// LogOutput receives the log of inspecting the module; nil discards it.
	LogOutput io.Writer
	// HostVersion is told to the extension's init while it is inspected.
	HostVersion string
	// CompileProgress is told when inspecting the module compiles it
	// (the compile later starts then reuse from the cache); nil for none.
	CompileProgress CompileProgress
}

// Installed says what an install did.
type Installed struct {
	Info ExtensionInfo
	// Scope is "project" or "global"; TOML the pi.toml that was edited;
	// Dest the installed module; SHA256 its digest.
	Scope, TOML, Dest, SHA256 string
	// Trusted says the project's trust was recorded again for the edited
	// pi.toml; false for a project that was not trusted before (its
	// extensions do not load until `pi trust`), and for a global install
	// (the global file needs no trust).
	Trusted bool
	// Missing lists what init asked for (its "wants") that was not
	// granted, as KIND=VALUE.
	Missing []string
	// Notes are for the user: required config keys of the extension's
	// configSchema that are still missing (ABI 1.1).
	Notes []string
}

// InstallExtension is the install transaction: it loads the module into a
// sandbox to check it and read its name, copies it to the scope's
// extensions folder, appends its [[extensions]] block to pi.toml, and keeps
// the project's trust as it was (a trusted or new project stays trusted; an
// untrusted one stays untrusted).
//
// # Errors
//
// A module the host refuses (not WebAssembly, not pi's ABI, a bad import,
// init failing), grants with a bad grammar, a module already installed under
// that name (or anything, even a link, where it would go), and pi.toml
// errors. On any error nothing is written: a copied module is removed again
// when pi.toml cannot be edited.
func InstallExtension(ctx context.Context, req InstallRequest) (Installed, error) {
	t, err := req.target()
	if err != nil {
		return Installed{}, err
	}
	src, err := filepath.Abs(req.Source)
	if err != nil {
		return Installed{}, err
	}
	mod, err := inspectFile(ctx, t, src, req.Config, req.LogOutput, req.HostVersion, req.CompileProgress)
	if err != nil {
		return Installed{}, err
	}
	info := mod.info
	out := Installed{Info: info, Scope: t.scope, TOML: t.toml, Dest: filepath.Join(t.dir, info.Name+".wasm"), SHA256: mod.sha256}
	wasTrusted := true
	if t.scope == config.ScopeProject {
		if _, err := os.Stat(t.toml); err == nil {
			if wasTrusted, err = config.IsTrusted(t.home, t.toml); err != nil {
				return Installed{}, err
			}
		}
	}
	if err := installFiles(mod.data, out.Dest, t.toml, config.Extension{
		Name: info.Name, Path: out.Dest, SHA256: mod.sha256, Override: req.Override, Grants: req.Grants, Limits: req.Limits, Config: req.Config,
	}); err != nil {
		return Installed{}, err
	}
	recordDeclared(t.home, info)
	out.Missing = missingGrants(info.Wants, req.Grants)
	out.Notes = mod.notes
	if t.scope == config.ScopeProject && wasTrusted {
		if err := config.Trust(t.home, t.toml); err != nil {
			return out, fmt.Errorf("installed, but recording trust failed: %w", err)
		}
		out.Trusted = true
	}
	return out, nil
}

// inspected is a module file read once and checked in a sandbox: the bytes
// that were inspected are the bytes that get installed, so a file changed
// in between cannot slip in unchecked.
type inspected struct {
	data   []byte
	sha256 string
	info   ExtensionInfo
	// notes are checkInstallConfig's (required config keys not given).
	notes []string
}

// inspectFile reads src, loads a private copy of its bytes in an empty
// sandbox (no grants, default limits, the given config) to run its init,
// and checks cfg against what init declared.
func inspectFile(ctx context.Context, t extTarget, src string, cfg map[string]any, logOut io.Writer, hostVersion string, progress CompileProgress) (inspected, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return inspected{}, err
	}
	tmp, err := os.MkdirTemp("", "pi-inspect-")
	if err != nil {
		return inspected{}, err
	}
	defer os.RemoveAll(tmp)
	copyPath := filepath.Join(tmp, filepath.Base(src))
	if !strings.HasSuffix(copyPath, ".wasm") {
		copyPath += ".wasm"
	}
	if err := os.WriteFile(copyPath, data, 0o600); err != nil {
		return inspected{}, err
	}
	if logOut == nil {
		logOut = io.Discard
	}
	host, err := extensions.NewHost(ctx, withCompileProgress(extensions.Options{
		CacheDir: config.CacheDir(t.home), Logger: newLogger("warn", logOut), ProjectRoot: t.cwd, Cwd: t.cwd,
		HostName: "pi", HostVersion: firstNonEmpty(hostVersion, "dev"), Mode: ModeInspect,
	}, progress))
	if err != nil {
		return inspected{}, fmt.Errorf("inspect %s: %w", src, err)
	}
	defer host.Close(ctx)
	e, err := host.Load(ctx, extensions.Spec{Path: copyPath, Config: cfg})
	if err != nil {
		// The error names the private copy; name the file the user gave.
		return inspected{}, fmt.Errorf("inspect %s: %s", src, strings.ReplaceAll(err.Error(), copyPath, src))
	}
	info := e.Info()
	info.Path = src
	notes, err := checkInstallConfig(info, cfg, t.toml)
	if err != nil {
		return inspected{}, fmt.Errorf("extension %s: [extensions.config]: %w", info.Name, err)
	}
	sum := sha256.Sum256(data)
	return inspected{data: data, sha256: hex.EncodeToString(sum[:]), info: info, notes: notes}, nil
}

// installFiles copies the module and appends its block; when appending fails
// the copied module is removed again, so a refused install leaves nothing.
// Nothing may be at dest, not even a symlink: the writer follows links, and
// a link planted in .pi/extensions must not steer the copy elsewhere.
func installFiles(data []byte, dest, toml string, e config.Extension) error {
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("%s already exists: update the installed extension instead (pi ext update %s FILE.wasm), or remove it first (pi ext remove %s)", dest, e.Name, e.Name)
	}
	if err := atomicfile.WriteFile(dest, data, 0o644); err != nil {
		return err
	}
	if err := config.AppendExtension(toml, e); err != nil {
		os.Remove(dest)
		return err
	}
	return nil
}

// missingGrants lists, as KIND=VALUE, what want asks for that have lacks.
func missingGrants(want extensions.Grants, have config.Grants) []string {
	var miss []string
	for _, kind := range []struct {
		name       string
		want, have []string
	}{{"fs", want.FS, have.FS}, {"exec", want.Exec, have.Exec}, {"env", want.Env, have.Env}, {"http", want.HTTP, have.HTTP}, {"tool", want.Tools, have.Tools}} {
		for _, v := range kind.want {
			if !slices.Contains(kind.have, v) {
				miss = append(miss, kind.name+"="+v)
			}
		}
	}
	return miss
}

// Removed says what a removal did.
type Removed struct {
	// TOML is the pi.toml the block was removed from; Deleted the module
	// file that was deleted ("" when there was none).
	TOML, Deleted string
	// Tidied lists what was deleted because the removal left it empty:
	// the pi.toml (nothing but white space left), the extensions folder,
	// the project's .pi folder.
	Tidied []string
}

// RemoveExtension is the removal transaction: it removes the [[extensions]]
// block named name from the scope's pi.toml, deletes the installed module,
// and keeps the project's trust as it was. What the removal leaves empty
// is deleted too, so installing and removing leaves nothing behind: a
// pi.toml with nothing but white space left (and the trust record of
// it), an empty extensions folder, an empty .pi folder.
//
// # Errors
//
// No such extension in that pi.toml; pi.toml errors; recording trust again
// failing (the removal itself is done then).
func RemoveExtension(scope ExtensionScope, name string) (Removed, error) {
	t, err := scope.target()
	if err != nil {
		return Removed{}, err
	}
	wasTrusted := false
	if t.scope == config.ScopeProject {
		wasTrusted, _ = config.IsTrusted(t.home, t.toml)
	}
	if err := config.RemoveExtension(t.toml, name); err != nil {
		return Removed{}, err
	}
	out := Removed{TOML: t.toml}
	dest := filepath.Join(t.dir, name+".wasm")
	if err := os.Remove(dest); err == nil {
		out.Deleted = dest
	}
	out.Tidied = tidyAfterRemove(t)
	if _, err := os.Stat(t.toml); wasTrusted && err == nil {
		if err := config.Trust(t.home, t.toml); err != nil {
			return out, fmt.Errorf("recording trust failed: %w", err)
		}
	}
	return out, nil
}

// ConfiguredExtension is one [[extensions]] entry as `pi ext list` shows
// it: what pi.toml says, and what inspecting the module found.
type ConfiguredExtension struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Tools   []string `json:"tools"`
	Hooks   []string `json:"hooks"`
	// Commands are its slash commands, without the slash (ABI 1.1).
	Commands []string          `json:"commands"`
	Grants   extensions.Grants `json:"grants"`
	SHA256   string            `json:"sha256"`
	Scope    string            `json:"scope"`
	Path     string            `json:"path"`
	File     string            `json:"configFile"`
	// Trusted is false for a project extension of an untrusted project
	// (it does not load).
	Trusted bool `json:"trusted"`
	// Problem says why the module would not load ("" when it would).
	Problem string `json:"error,omitempty"`
}

// loadForListing loads the global and the project pi.toml as a listing
// shows them: the project's settings even when it is not trusted, and
// whether it is.
func loadForListing(cwdIn, homeIn string) (cwd, home string, cfg *config.Config, trusted bool, err error) {
	if cwd, err = WorkingDir(cwdIn); err != nil {
		return "", "", nil, false, err
	}
	home = firstNonEmpty(homeIn, config.DefaultPIHome())
	if cfg, err = config.Load(config.LoadOptions{Cwd: cwd, PIHome: home, Trust: true}); err != nil {
		return "", "", nil, false, err
	}
	trusted = true
	if cfg.ProjectFile != "" {
		trusted, _ = config.IsTrusted(home, cfg.ProjectFile)
	}
	return cwd, home, cfg, trusted, nil
}

// ListExtensions lists the [[extensions]] entries of the global and the
// project pi.toml (global first), each checked: its file's sha256 against
// pi.toml, then the module inspected in a sandbox. A project's entries are
// listed even when it is not trusted.
func ListExtensions(ctx context.Context, scope ExtensionScope) ([]ConfiguredExtension, error) {
	cwd, home, cfg, trusted, err := loadForListing(scope.Cwd, scope.PIHome)
	if err != nil {
		return nil, err
	}
	entries := []ConfiguredExtension{}
	for _, e := range cfg.Extensions {
		en := ConfiguredExtension{Name: e.Name, Grants: nonNilGrants(e.Grants),
			SHA256: e.SHA256, Scope: e.Scope, Path: e.Path, File: e.File, Trusted: e.Scope != config.ScopeProject || trusted,
			Tools: []string{}, Hooks: []string{}, Commands: []string{}}
		if sum, err := extensions.FileSHA256(e.Path); err != nil {
			en.Problem = err.Error()
		} else if sum != e.SHA256 {
			update := "pi ext update " + e.Name
			if e.Scope == config.ScopeGlobal {
				update += " --global"
			}
			en.Problem = fmt.Sprintf("disabled: sha256 of %s is %s, pi.toml says %s: the file changed since it was installed (if you rebuilt it, pin the new build with %s)", e.Path, sum, e.SHA256, update)
		} else if info, err := extensions.Inspect(ctx, e.Path, extensions.Options{CacheDir: config.CacheDir(home), Logger: newLogger("off", io.Discard), ProjectRoot: cwd, Cwd: cwd, HostName: "pi", Mode: ModeInspect}); err != nil {
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
				if err := extensions.ValidateConfig(info.ConfigSchema, e.Config, configKey(cfg.Extensions, e)); err != nil {
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
func nonNilGrants(g config.Grants) config.Grants {
	for _, l := range []*[]string{&g.FS, &g.Exec, &g.Env} {
		if *l == nil {
			*l = []string{}
		}
	}
	return g
}

// checkInstallConfig checks the config an install is about to write
// against the extension's configSchema (ABI 1.1), before anything is
// written: a value of the wrong shape refuses the install; a required key
// that is still missing is only a note naming the flag.
func checkInstallConfig(info ExtensionInfo, cfg map[string]any, toml string) ([]string, error) {
	if info.ConfigSchema == nil {
		return nil, nil
	}
	missing, err := extensions.ValidateConfigValues(info.ConfigSchema, cfg, "extensions.config")
	if err != nil {
		return nil, fmt.Errorf("--ext-config: %w", err)
	}
	var notes []string
	for _, m := range missing {
		key := strings.TrimPrefix(m, "extensions.config.")
		notes = append(notes, fmt.Sprintf("the extension requires config key %s: give it with --ext-config %s=VALUE, or set it under [extensions.config] in %s", key, key, toml))
	}
	return notes, nil
}
