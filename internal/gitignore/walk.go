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
	err := w.dir(NewRoot(root))
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
	buf []byte // readDir's buffer
	ctx context.Context
	fn  func(Entry) error
}

func (w *walker) dir(d *Dir) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	entries, err := d.List(&w.buf)
	if err != nil {
		return nil
	}
	for i, e := range entries {
		if i%64 == 63 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		childRel := d.RelDir + e.Name
		childAbs := d.AbsDir + e.Name
		err := w.fn(Entry{Rel: childRel, Path: childAbs, IsDir: e.IsDir, Type: e.Type})
		if err != nil {
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			return err
		}
		if e.IsDir {
			if err := w.dir(d.Sub(e.Name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Dir is one directory of a walk, to be listed with its ignore rules
// applied. Walk lists directories one after the other; a caller that lists
// them in another order or on several goroutines (grep's parallel search)
// gets the same entries, since a Dir carries the ignore files that apply to
// it. A Dir is listed once, by one goroutine; Sub may then be called from
// any goroutine.
type Dir struct {
	// AbsDir is the directory's path on disk with a trailing separator.
	AbsDir string
	// RelDir is its slash path from the walk's root with a trailing '/'
	// ("" for the root).
	RelDir string
	stack  ignoreStack // ignore files of the directories above
	prefix string      // the root as a slash path from the top the ignore bases are relative to
	// own is stack plus this directory's .gitignore, set by List.
	own ignoreStack
}

// NewRoot is the Dir of a walk's root: it loads the ignore files that apply
// from above the root (see Walk).
func NewRoot(root string) *Dir {
	root = filepath.Clean(root)
	d := &Dir{AbsDir: root}
	if !strings.HasSuffix(d.AbsDir, string(filepath.Separator)) {
		d.AbsDir += string(filepath.Separator)
	}
	d.stack, d.prefix = ancestorIgnores(root)
	return d
}

// DirEntry is one entry of a listed directory that the walk visits.
type DirEntry struct {
	Name  string
	IsDir bool        // a directory (never a symlink)
	Type  fs.FileMode // type bits (fs.ModeSymlink, fs.ModeDir, ...)
}

// List reads the directory, loads its .gitignore and returns, sorted by name
// (byte order), the entries the walk visits: not .git, not ignored. buf is
// the listing buffer, reused across calls of one goroutine.
//
// # Errors
//
// List fails when the directory cannot be opened or read; the walk skips
// such a directory.
//
// A directory below the root that is a symbolic link by the time it is
// opened (swapped in after its parent was listed) is not followed: List
// fails.
func (d *Dir) List(buf *[]byte) ([]DirEntry, error) {
	out, _, err := d.list(buf, false, -1)
	return out, err
}

// ListOpen is List that keeps the directory open: fd, when not -1 (it is
// always -1 off Linux), is its descriptor, for openat, and the caller
// closes it. parent, when not -1, is the open directory d is in (the fd of
// its parent's ListOpen): d is opened relative to it, so that no directory
// above d can have been swapped for a symbolic link since it was listed.
//
// # Errors
//
// ListOpen fails as List does; then no descriptor is left open.
func (d *Dir) ListOpen(buf *[]byte, parent int) (entries []DirEntry, fd int, err error) {
	return d.list(buf, true, parent)
}

func (d *Dir) list(buf *[]byte, keep bool, parent int) ([]DirEntry, int, error) {
	if d.RelDir == "" {
		parent = -1 // the root is opened by its path, links followed
	}
	entries, fd, err := readDir(d.abs(), buf, keep, d.RelDir != "", parent)
	if err != nil {
		return nil, -1, err
	}
	here := strings.TrimSuffix(d.prefix+d.RelDir, "/") // this directory from the top
	d.own = d.stack
	if hasEntry(entries, ".gitignore") {
		if f := readIgnoreFile(d.AbsDir+".gitignore", here); f != nil {
			d.own = append(d.stack[:len(d.stack):len(d.stack)], f)
		}
	}
	// Where this directory is seen from each ignore file, worked out once
	// for all its entries.
	var at []ignoreAt
	if len(d.own) > 0 {
		at = d.own.at(here)
	}
	out := make([]DirEntry, 0, len(entries))
	for _, e := range entries {
		if e.name == ".git" {
			continue
		}
		isDir := e.typ == fs.ModeDir
		if at != nil && ignoredAt(at, e.name, isDir) {
			continue
		}
		out = append(out, DirEntry{Name: e.name, IsDir: isDir, Type: e.typ})
	}
	return out, fd, nil
}

// Sub is the Dir of the listed directory's subdirectory name (an entry List
// returned).
func (d *Dir) Sub(name string) *Dir {
	return &Dir{
		AbsDir: d.AbsDir + name + string(filepath.Separator),
		RelDir: d.RelDir + name + "/",
		stack:  d.own,
		prefix: d.prefix,
	}
}

// abs is the directory's path without the trailing separator (but "/" for
// the file system's root).
func (d *Dir) abs() string {
	if len(d.AbsDir) > 1 {
		return d.AbsDir[:len(d.AbsDir)-1]
	}
	return d.AbsDir
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
