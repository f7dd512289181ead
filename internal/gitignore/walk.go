package gitignore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Entry is one file, directory or other entry met by Walk.
type Entry struct {
	// Rel is the slash path from the walk's root ("src/main.go").
	Rel string
	// Path is the path on disk.
	Path string
	// IsDir is true for directories (never for a symlink, which the walk
	// does not follow).
	IsDir bool
	// Type is the entry's type bits (fs.ModeSymlink, fs.ModeDir, ...).
	Type fs.FileMode
}

// ErrStop ends a walk early without an error.
var ErrStop = errors.New("stop walk")

// Walk visits every entry below root (not root itself) in a fixed order:
// depth first, the entries of each directory sorted by name (byte order), a
// directory before its contents. It honours .gitignore files (nested ones too,
// those of the enclosing repository's directories above root, and the
// repository's .git/info/exclude), always skips entries named .git, and does
// not follow symbolic links. Unreadable directories are skipped.
//
// fn may return fs.SkipDir for a directory to not enter it, or ErrStop to
// end the walk; any other error ends the walk and is returned. The walk checks
// ctx between entries and returns ctx.Err() when it is cancelled.
//
// # Errors
//
// Walk fails with ctx.Err() on cancellation or with the error fn returned.
func Walk(ctx context.Context, root string, fn func(Entry) error) error {
	w := &walker{ctx: ctx, fn: fn}
	root = filepath.Clean(root)
	w.stack, w.prefix = ancestorIgnores(root)
	err := w.dir(root, "")
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// dirEntry is one entry of a directory listing: its name and type bits.
type dirEntry struct {
	name string
	typ  fs.FileMode
}

type walker struct {
	buf    []byte // readDir's buffer
	ctx    context.Context
	fn     func(Entry) error
	stack  ignoreStack
	prefix string // root as a slash path from the top the ignore bases are relative to ("" or "a/b/")
}

func (w *walker) dir(abs, rel string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	entries, err := readDir(abs, &w.buf)
	if err != nil {
		return nil
	}
	depth := len(w.stack)
	here := strings.TrimSuffix(w.prefix+rel, "/") // this directory from the top
	if hasEntry(entries, ".gitignore") {
		if f := readIgnoreFile(filepath.Join(abs, ".gitignore"), here); f != nil {
			w.stack = append(w.stack, f)
		}
	}
	defer func() { w.stack = w.stack[:depth] }()
	// Where this directory is seen from each ignore file, worked out once
	// for all its entries.
	var at []ignoreAt
	if len(w.stack) > 0 {
		at = w.stack.at(here)
	}
	// Paths are built by concatenation: abs is clean (Walk cleans root)
	// and a name has no separator, so filepath.Join would only clean
	// again.
	absDir := abs
	if !strings.HasSuffix(absDir, string(filepath.Separator)) {
		absDir += string(filepath.Separator)
	}
	relDir := rel
	if relDir != "" {
		relDir += "/"
	}
	for i, e := range entries {
		if i%64 == 63 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		name := e.name
		if name == ".git" {
			continue
		}
		isDir := e.typ == fs.ModeDir
		if at != nil && ignoredAt(at, name, isDir) {
			continue
		}
		childRel := relDir + name
		childAbs := absDir + name
		err := w.fn(Entry{Rel: childRel, Path: childAbs, IsDir: isDir, Type: e.typ})
		if err != nil {
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			return err
		}
		if isDir {
			if err := w.dir(childAbs, childRel); err != nil {
				return err
			}
		}
	}
	return nil
}

// hasEntry reports whether the sorted entries hold one with that name.
func hasEntry(entries []dirEntry, name string) bool {
	i := sort.Search(len(entries), func(i int) bool { return entries[i].name >= name })
	return i < len(entries) && entries[i].name == name
}

// ancestorIgnores finds the git repository root enclosing root (the nearest
// directory above or at root holding a .git entry) and loads what applies to
// root from above: .git/info/exclude and the .gitignore files of the
// directories from the repository root down to root's parent. It returns them
// with root's slash path from the repository root ("src/pkg/", or "" when root
// is the repository root or no repository encloses it; then only root's own
// .gitignore files apply).
func ancestorIgnores(root string) (ignoreStack, string) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, ""
	}
	top := ""
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			top = d
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if top == "" {
		return nil, ""
	}
	var stack ignoreStack
	if f := readIgnoreFile(filepath.Join(top, ".git", "info", "exclude"), ""); f != nil {
		stack = append(stack, f)
	}
	if top == abs {
		return stack, ""
	}
	relRoot, err := filepath.Rel(top, abs)
	if err != nil {
		return stack, ""
	}
	relRoot = filepath.ToSlash(relRoot)
	base := ""
	for _, part := range strings.Split(relRoot, "/") {
		if f := readIgnoreFile(filepath.Join(top, filepath.FromSlash(base), ".gitignore"), strings.TrimSuffix(base, "/")); f != nil {
			stack = append(stack, f)
		}
		base += part + "/"
	}
	return stack, relRoot + "/"
}
