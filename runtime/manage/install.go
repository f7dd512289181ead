package manage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/execgrant"
	"github.com/pi-go/pi/runtime/extspec"
)

// ExtensionInfo describes an extension: what its init declared.
type ExtensionInfo = extensions.Info

// Grants and Limits are an [[extensions]] entry's (the rules are
// runtime/extspec's: Grants.AddFlag parses --grant KIND=VALUE, Limits.Check
// the bounds).
type (
	Grants = extspec.Grants
	Limits = extspec.Limits
)

// CompileProgress is told when inspecting a module compiles it.
type CompileProgress = extensions.CompileProgress

// ErrExtensionExists is wrapped by Install's error when the pi.toml names
// an extension of that name already.
var ErrExtensionExists = config.ErrExtensionExists

// ParseExtensionConfig builds an extension's [extensions.config] table
// from --ext-config-file FILE and --ext-config KEY=VALUE (see
// config.ParseExtensionConfig).
func ParseExtensionConfig(file string, assignments []string) (map[string]any, error) {
	return config.ParseExtensionConfig(file, assignments)
}

// InstallRequest is one `pi ext install`.
type InstallRequest struct {
	Scope
	// Source is the .wasm file to install.
	Source string
	// Override lets its tools replace built-in tools (and tools of
	// extensions installed before) of the same name; without it a clash
	// refuses the install.
	Override bool
	Grants   Grants
	Limits   Limits
	// Config is the entry's [extensions.config] (--ext-config,
	// --ext-config-file; see ParseExtensionConfig); nil for none. The
	// module is inspected with it, so an init that refuses it refuses the
	// install.
	Config map[string]any
	// Activate adds its tools to [tools] active when a pi.toml sets that
	// list (else they would be off); see Installed.Off.
	Activate bool
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
	// RunsCode says, for each exec grant that lets it run arbitrary code,
	// why (execgrant.RunsCode).
	RunsCode []string
	// Notes are for the user: required config keys of the extension's
	// configSchema that are still missing (ABI 1.1).
	Notes []string
	Active
}

// Active says how a new extension's or MCP server's tools stand against
// [tools] active.
type Active struct {
	// Off lists the new tools the active list leaves out (none when no
	// pi.toml sets [tools] active: every tool is then active); ActiveAt is
	// that list's FILE:LINE.
	Off      []string
	ActiveAt string
	// Activated lists the tools Activate added to the list (in
	// ActiveFile); ActivateErr says why adding them failed (the install
	// itself is done then).
	Activated   []string
	ActiveFile  string
	ActivateErr error
}

// Install is the install transaction: it loads the module into a sandbox
// to check it and read its name, refuses it when one of its tools has the
// name of a built-in tool or of another configured extension's tool
// (unless Override), copies it to the scope's extensions folder, appends
// its [[extensions]] block to pi.toml, keeps the project's trust as it was
// (a trusted or new project stays trusted; an untrusted one stays
// untrusted), and, with Activate, adds its tools to [tools] active.
//
// # Errors
//
// A module the host refuses (not WebAssembly, not pi's ABI, a bad import,
// init failing), a tool name that clashes, grants with a bad grammar, a
// module already installed under that name (or anything, even a link,
// where it would go), and pi.toml errors. On any error nothing is written:
// a copied module is removed again when pi.toml cannot be edited. When
// recording trust fails after the edit, the install is done and Dest is
// set.
func Install(ctx context.Context, req InstallRequest) (Installed, error) {
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
	if !req.Override {
		if err := checkToolClash(ctx, t, info); err != nil {
			return Installed{}, err
		}
	}
	dest := filepath.Join(t.dir, info.Name+".wasm")
	trusted, written, err := editKeepingTrust(t.tomlFile, "installed", func() error {
		return installFiles(mod.data, dest, t.path, config.Extension{
			Name: info.Name, Path: dest, SHA256: mod.sha256, Override: req.Override, Grants: req.Grants, Limits: req.Limits, Config: req.Config,
		})
	})
	if !written {
		return Installed{}, err
	}
	out := Installed{Info: info, Scope: t.scope, TOML: t.path, Dest: dest, SHA256: mod.sha256, Trusted: trusted}
	extensions.RecordDeclared(config.DeclaredDir(t.home), info)
	out.Missing = missingGrants(info.Wants, req.Grants)
	for _, pat := range req.Grants.Exec {
		if why := execgrant.RunsCode(pat); why != "" {
			out.RunsCode = append(out.RunsCode, why)
		}
	}
	out.Notes = mod.notes
	if err != nil {
		return out, err
	}
	var names []string
	for _, tl := range info.Tools {
		names = append(names, tl.Name)
	}
	out.Active = activeFor(Scope{Cwd: t.cwd, PIHome: t.home}, names, req.Activate)
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

// inspectLogger is the log of inspecting a module: warnings and errors.
func inspectLogger(w io.Writer) hclog.Logger {
	if w == nil {
		w = io.Discard
	}
	return hclog.New(&hclog.LoggerOptions{Name: "pi", Level: hclog.Warn, Output: w})
}

// inspectFile reads src, loads a private copy of its bytes in an empty
// sandbox (no grants, default limits, the given config) to run its init,
// and checks cfg against what init declared.
func inspectFile(ctx context.Context, t target, src string, cfg map[string]any, logOut io.Writer, hostVersion string, progress CompileProgress) (inspected, error) {
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
	if hostVersion == "" {
		hostVersion = "dev"
	}
	logger := inspectLogger(logOut)
	cache, err := config.TrustedCacheDir(t.home)
	if err != nil {
		logger.Warn(err.Error())
	}
	host, err := extensions.NewHost(ctx, extensions.Options{
		CacheDir: cache, Logger: logger, ProjectRoot: t.cwd, Cwd: t.cwd,
		HostName: "pi", HostVersion: hostVersion, Mode: extensions.ModeInspect,
	}.WithCompileProgress(progress))
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
	notes, err := checkInstallConfig(info, cfg, t.path)
	if err != nil {
		return inspected{}, fmt.Errorf("extension %s: [extensions.config]: %w", info.Name, err)
	}
	sum := sha256.Sum256(data)
	info.SHA256 = hex.EncodeToString(sum[:])
	return inspected{data: data, sha256: info.SHA256, info: info, notes: notes}, nil
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
func missingGrants(want, have Grants) []string {
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
	if want.LLM && !have.LLM {
		miss = append(miss, "llm=true")
	}
	if want.Model && !have.Model {
		miss = append(miss, "model=true")
	}
	return miss
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
