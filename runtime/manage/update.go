package manage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/runtime/config"
)

// UpdateRequest is one `pi ext update NAME [FILE]`.
type UpdateRequest struct {
	Scope
	// Name is the installed extension's name.
	Name string
	// Source is the new .wasm file, copied over the installed module. ""
	// re-pins the module already at the entry's path: for a module rebuilt
	// in place, or an installed copy that was replaced by hand.
	Source string
	// LogOutput receives the log of inspecting the module; nil discards it.
	LogOutput io.Writer
	// HostVersion is told to the extension's init while it is inspected.
	HostVersion string
	// CompileProgress is told when inspecting the new module compiles it;
	// nil for none.
	CompileProgress CompileProgress
}

// Updated says what an update did.
type Updated struct {
	Info ExtensionInfo
	// Scope is "project" or "global"; TOML the pi.toml whose sha256 was
	// rewritten; Path the installed module.
	Scope, TOML, Path string
	// OldSHA256 is what pi.toml pinned before, SHA256 what it pins now
	// (equal when nothing changed).
	OldSHA256, SHA256 string
	// Copied says Source was copied over Path.
	Copied bool
	// Trusted says the project's trust was recorded again after the edit
	// (it was trusted before); false for an untrusted project, which stays
	// untrusted, and for a global update.
	Trusted bool
	// Missing lists what the new module's init asks for (its "wants") that
	// the entry does not grant, as KIND=VALUE.
	Missing []string
	// KVStores are the entry's kv stores moved to the new digest
	// (extensions.MoveKVStores): the store belongs to the entry, so an
	// update keeps it.
	KVStores []string
}

// Update is the update transaction, the lossless way to replace a module
// after a rebuild: it finds the entry named req.Name in the scope's
// pi.toml, inspects the new module in a sandbox (with the entry's config,
// no grants), copies it over the installed file (when Source is given),
// and rewrites only the entry's sha256 in pi.toml. Grants, limits,
// override, [extensions.config] and every other byte of pi.toml stay as
// they were, and a project that was trusted stays trusted (pi records the
// trust of the file it just wrote; an untrusted one stays untrusted).
//
// With a Source, the installed module must be where pi installs modules
// (.pi/extensions/ or $PI_HOME/extensions/), a regular file (not a link):
// an entry whose path points elsewhere is the author's own build output,
// which update does not overwrite; rebuild it there and update without a
// Source.
//
// # Errors
//
// No entry of that name in that pi.toml (ErrNotInstalled); a module the
// host refuses (not WebAssembly, not pi's ABI, init failing with the
// entry's config), or one whose init declares another name; an installed
// path outside the extensions folder or a link; pi.toml errors. On any
// error nothing is written: a copied module is put back when pi.toml
// cannot be edited. When recording trust fails after the edit, the update
// is done and TOML is set.
func Update(ctx context.Context, req UpdateRequest) (Updated, error) {
	t, err := req.target()
	if err != nil {
		return Updated{}, err
	}
	entry, err := findEntry(t, req.Name)
	if err != nil {
		return Updated{}, err
	}
	src := entry.Path
	if req.Source != "" {
		if src, err = filepath.Abs(req.Source); err != nil {
			return Updated{}, err
		}
	}
	mod, err := inspectFile(ctx, t, src, entry.Config, req.LogOutput, req.HostVersion, req.CompileProgress)
	if err != nil {
		return Updated{}, err
	}
	if mod.info.Name != req.Name {
		return Updated{}, fmt.Errorf("update extension %s: %s declares the extension %q, not %q; install it under its own name with pi ext install %s", req.Name, src, mod.info.Name, req.Name, src)
	}
	out := Updated{Info: mod.info, Scope: t.scope, TOML: t.path, Path: entry.Path, OldSHA256: entry.SHA256, SHA256: mod.sha256}
	out.Info.Path = entry.Path
	out.Missing = missingGrants(mod.info.Wants, entry.Grants)
	trusted, written, err := editKeepingTrust(t.tomlFile, "updated", func() error {
		restore := func() {}
		if req.Source != "" && !sameFile(src, entry.Path) {
			var err error
			if restore, err = replaceModule(t, entry, mod.data); err != nil {
				return err
			}
			out.Copied = true
		}
		if mod.sha256 != entry.SHA256 {
			if err := config.SetExtensionSHA256(t.path, req.Name, mod.sha256); err != nil {
				restore()
				out.Copied = false
				return err
			}
		}
		return nil
	})
	if !written {
		return Updated{}, err
	}
	out.Trusted = trusted
	extensions.RecordDeclared(config.DeclaredDir(t.home), out.Info)
	// The entry's kv stores follow it to the new digest.
	moved, kvErr := extensions.MoveKVStores(config.KVDir(t.home), t.path, req.Name, entry.SHA256, mod.sha256)
	out.KVStores = moved
	return out, errors.Join(err, kvErr)
}

// findEntry returns the [[extensions]] entry named name in the target's
// pi.toml.
func findEntry(t target, name string) (config.Extension, error) {
	exts, err := config.FileExtensions(t.path, t.scope)
	if errors.Is(err, os.ErrNotExist) {
		return config.Extension{}, fmt.Errorf("update extension %s: %w: %s does not exist (pi ext install FILE.wasm installs it)", name, ErrNotInstalled, t.path)
	}
	if err != nil {
		return config.Extension{}, err
	}
	var names []string
	for _, e := range exts {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	installed := "none installed"
	if len(names) > 0 {
		installed = "installed: " + strings.Join(names, ", ")
	}
	return config.Extension{}, fmt.Errorf("update extension %s: %w in %s (%s)", name, ErrNotInstalled, t.path, installed)
}

// ErrNotInstalled is wrapped by Update's error when the scope's pi.toml
// has no extension of that name.
var ErrNotInstalled = errors.New("no extension of that name is installed")

// Inspect checks the module at path the way install does, in an empty
// sandbox (no grants, default limits, cfg as its config), and says what its
// init declared, without writing anything (`pi ext dev`).
//
// # Errors
//
// The reasons install refuses a module.
func Inspect(ctx context.Context, scope Scope, path string, cfg map[string]any, logOut io.Writer, hostVersion string) (ExtensionInfo, error) {
	t, err := scope.target()
	if err != nil {
		return ExtensionInfo{}, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ExtensionInfo{}, err
	}
	mod, err := inspectFile(ctx, t, abs, cfg, logOut, hostVersion, nil)
	if err != nil {
		return ExtensionInfo{}, err
	}
	return mod.info, nil
}

// replaceModule writes data over the entry's installed module and returns
// a function that puts the old bytes back. Only a regular file (or
// nothing) directly in the scope's extensions folder is written: the
// writer follows links, and a path pi.toml points elsewhere is not pi's to
// overwrite.
func replaceModule(t target, entry config.Extension, data []byte) (restore func(), err error) {
	dest := entry.Path
	if filepath.Dir(dest) != t.dir {
		return nil, fmt.Errorf("update extension %s: its module %s is not in %s, where pi installs modules, so update does not overwrite it: rebuild it in place and run pi ext update %s (without FILE) to pin the new build, or remove the extension and install FILE", entry.Name, dest, t.dir, entry.Name)
	}
	fi, err := os.Lstat(dest)
	var old []byte
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return nil, fmt.Errorf("update extension %s: %s is not a regular file (%s); pi does not write through it: remove it and run pi ext update %s FILE again", entry.Name, dest, fi.Mode().Type(), entry.Name)
	case err == nil:
		if old, err = os.ReadFile(dest); err != nil {
			return nil, err
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	if err := atomicfile.WriteFile(dest, data, 0o644); err != nil {
		return nil, err
	}
	return func() {
		if old == nil {
			os.Remove(dest)
			return
		}
		_ = atomicfile.WriteFile(dest, old, 0o644)
	}, nil
}

// sameFile reports whether a and b name the same file.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
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

// Remove is the removal transaction: it removes the [[extensions]] block
// named name from the scope's pi.toml, deletes the installed module, and
// keeps the project's trust as it was. What the removal leaves empty is
// deleted too, so installing and removing leaves nothing behind: a
// pi.toml with nothing but white space left (and the trust record of it),
// an empty extensions folder, an empty .pi folder. A [tools] active that
// names its tools is left as it is: pi warns about those names at start.
//
// # Errors
//
// No such extension in that pi.toml; the project's trust cannot be read;
// pi.toml errors; recording trust again failing (the removal itself is
// done then, and TOML is set).
func Remove(scope Scope, name string) (Removed, error) {
	t, err := scope.target()
	if err != nil {
		return Removed{}, err
	}
	out := Removed{}
	_, written, err := editKeepingTrust(t.tomlFile, "", func() error {
		if err := config.RemoveExtension(t.path, name); err != nil {
			return err
		}
		dest := filepath.Join(t.dir, name+".wasm")
		if err := os.Remove(dest); err == nil {
			out.Deleted = dest
		}
		out.Tidied = tidyAfterRemove(t)
		return nil
	})
	if !written {
		return Removed{}, err
	}
	out.TOML = t.path
	return out, err
}

// tidyAfterRemove deletes what removing the last extension leaves empty:
// a pi.toml holding nothing but white space (and then the project's trust
// record, which trusted a file that is gone), and the extensions folder
// and, for a project, its .pi folder when they are empty. It reports what
// it deleted.
func tidyAfterRemove(t target) []string {
	var deleted []string
	if data, err := os.ReadFile(t.path); err == nil && len(strings.TrimSpace(string(data))) == 0 {
		if os.Remove(t.path) == nil {
			deleted = append(deleted, t.path)
			if t.scope == config.ScopeProject {
				_ = config.Untrust(t.home, filepath.Dir(t.path))
			}
		}
	}
	dirs := []string{t.dir}
	if t.scope == config.ScopeProject {
		dirs = append(dirs, filepath.Dir(t.dir)) // .pi
	}
	for _, d := range dirs {
		if entries, err := os.ReadDir(d); err == nil && len(entries) == 0 && os.Remove(d) == nil {
			deleted = append(deleted, d)
		}
	}
	return slices.Clip(deleted)
}
