// Package scaffold writes a new extension project (`pi ext new`): for Go,
// C, Rust or WebAssembly text, a source file with one tool and one
// tool_call hook, build.sh, test.sh and a README, plus the sources pi
// ships for that language (the Go SDK as a local module, sdk/c/pi.h,
// sdk/rust/pi.rs), taken from the files embedded in package pi, so a
// project builds with its language's toolchain alone, offline.
package scaffold

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	pi "github.com/pi-go/pi"
	"github.com/pi-go/pi/runtime/extspec"
)

//go:embed all:templates
var templates embed.FS

// Languages are the values of Options.Lang.
var Languages = []string{"go", "c", "rust", "wat"}

// Options say what to write.
type Options struct {
	// Dir is the project folder; it must not exist or be empty.
	Dir string
	// Name is the extension's name ([a-z][a-z0-9_-]*); also its tool's.
	Name string
	// Lang is one of Languages.
	Lang string
	// PiVersion is written into the project's notes.
	PiVersion string
}

// Write writes the project and returns the paths it wrote, relative to
// Dir, sorted.
//
// # Errors
//
// A bad name or language; a Dir that is a file or a folder with something
// in it (nothing is overwritten); a failed write (what was written is
// removed again).
func Write(opts Options) (files []string, err error) {
	if err := extspec.CheckName(opts.Name); err != nil {
		return nil, fmt.Errorf("new extension %q: %w", opts.Name, err)
	}
	if !slices.Contains(Languages, opts.Lang) {
		return nil, fmt.Errorf("new extension %s: unknown language %q (go, c, rust or wat)", opts.Name, opts.Lang)
	}
	if entries, err := os.ReadDir(opts.Dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("new extension %s: %s already has files in it; choose a new folder (--dir)", opts.Name, opts.Dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("new extension %s: %w", opts.Name, err)
	}
	out, err := render(opts)
	if err != nil {
		return nil, err
	}
	created := false
	if _, err := os.Stat(opts.Dir); errors.Is(err, os.ErrNotExist) {
		created = true
	}
	defer func() {
		if err != nil && created {
			os.RemoveAll(opts.Dir)
		}
	}()
	for _, f := range out {
		p := filepath.Join(opts.Dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, fmt.Errorf("new extension %s: %w", opts.Name, err)
		}
		if err := os.WriteFile(p, f.data, f.mode); err != nil {
			return nil, fmt.Errorf("new extension %s: %w", opts.Name, err)
		}
		files = append(files, f.path)
	}
	slices.Sort(files)
	return files, nil
}

type file struct {
	path string
	data []byte
	mode os.FileMode
}

// render returns the project's files: the language's templates with the
// names filled in, and the shipped sources.
func render(opts Options) ([]file, error) {
	goVersion, err := moduleGoVersion()
	if err != nil {
		return nil, err
	}
	r := strings.NewReplacer(
		"__NAME__", opts.Name,
		"__IDENT__", strings.ReplaceAll(opts.Name, "-", "_"),
		"__GOVERSION__", goVersion,
		"__PIVERSION__", opts.PiVersion,
	)
	var out []file
	dir := "templates/" + opts.Lang
	err = fs.WalkDir(templates, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(p, dir+"/"), ".tmpl")
		rel = r.Replace(rel)
		mode := os.FileMode(0o644)
		if strings.HasSuffix(rel, ".sh") {
			mode = 0o755
		}
		out = append(out, file{rel, []byte(r.Replace(string(data))), mode})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("new extension %s: templates: %w", opts.Name, err)
	}
	shipped, err := shippedFiles(opts.Lang, goVersion)
	if err != nil {
		return nil, fmt.Errorf("new extension %s: %w", opts.Name, err)
	}
	return append(out, shipped...), nil
}

// shippedFiles are the sources pi ships for lang, at their place in the
// project.
func shippedFiles(lang, goVersion string) ([]file, error) {
	read := func(p string) ([]byte, error) { return pi.AuthorFiles.ReadFile(p) }
	switch lang {
	case "c":
		data, err := read("sdk/c/pi.h")
		return []file{{"pi.h", data, 0o644}}, err
	case "rust":
		data, err := read("sdk/rust/pi.rs")
		return []file{{"src/pi.rs", data, 0o644}}, err
	case "go":
		return goSDK(goVersion)
	}
	return nil, nil
}

// goSDK is the Go SDK as a module of its own at pisdk/: the module path is
// pi's own, github.com/pi-go/pi, holding sdk/ and the internal/abi package
// it imports (allowed: both are inside that module), so the author imports
// github.com/pi-go/pi/sdk exactly as pi's docs and examples do, and the
// project's go.mod points that path here with a replace directive.
func goSDK(goVersion string) ([]file, error) {
	out := []file{{"pisdk/go.mod", []byte("module github.com/pi-go/pi\n\ngo " + goVersion + "\n"), 0o644}, {
		"pisdk/README.md", []byte("This is the part of pi's Go module that an extension needs: the SDK (sdk/)\n" +
			"and the wire package it imports (internal/abi), copied by `pi ext new` from\n" +
			"the pi binary that wrote the project. It uses the standard library only.\n" +
			"Do not edit it; ../go.mod points github.com/pi-go/pi here.\n"), 0o644,
	}}
	for _, dir := range []string{"sdk", "internal/abi"} {
		entries, err := fs.ReadDir(pi.AuthorFiles, dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			data, err := pi.AuthorFiles.ReadFile(path.Join(dir, name))
			if err != nil {
				return nil, err
			}
			out = append(out, file{"pisdk/" + dir + "/" + name, data, 0o644})
		}
	}
	return out, nil
}

// moduleGoVersion is the go line of pi's go.mod.
func moduleGoVersion() (string, error) {
	data, err := pi.AuthorFiles.ReadFile("go.mod")
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "go "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", errors.New("pi's go.mod has no go line")
}
