package permission

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Hard links. A path rule names paths, and a file has as many paths as it
// has links: after `ln .env notes.txt`, notes.txt is the same file as .env.
// So a deny or ask rule with path globs also matches a path of a call whose
// file (a regular file with more than one link) has another link that the
// rule matches: same device, same inode.
//
// A file's other links cannot be asked of the kernel, so pi looks for
// them, once per call and only when a path of the call has more than one
// link: it walks the project root (links not followed, nothing skipped),
// the folders of absolute path globs (their part before the first glob
// character) and the file's own folder, at most MaxLinkWalk entries in
// all. When the walk stops at that bound before all the file's links were
// found, pi cannot clear the file, and every deny or ask path rule that
// applies matches it (fail closed), saying so. Links elsewhere (a name
// glob like ".env*" also matches a .env outside the project, which the walk
// does not visit) are not found.

// MaxLinkWalk bounds the entries one call's search for hard links visits.
var MaxLinkWalk = 200_000

// fileID is a file's identity: its device and inode.
type fileID struct{ dev, ino uint64 }

// linkTarget is a path of a call whose file has more than one link.
type linkTarget struct {
	path  string
	id    fileID
	nlink uint64
}

// linkIndex is what one call's walk found: every regular file with more
// than one link, by identity. Safe for concurrent use.
type linkIndex struct {
	p     *Policy
	once  sync.Once
	roots []string
	files map[fileID][]string
	// stopped is set when the walk reached MaxLinkWalk.
	stopped bool

	mu      sync.Mutex
	folders map[string]map[fileID][]string // folders outside the roots, listed on their own
}

func (p *Policy) newLinkIndex() *linkIndex { return &linkIndex{p: p} }

// linkTargetOf is path's target when it is a regular file (links
// followed) with more than one link.
func linkTargetOf(path string) (linkTarget, bool) {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() {
		return linkTarget{}, false
	}
	id, nlink, ok := identity(info)
	if !ok || nlink < 2 {
		return linkTarget{}, false
	}
	return linkTarget{path: path, id: id, nlink: nlink}, true
}

// walkRoots are the folders the walk visits: the project root (else the
// working directory) and the literal folders of absolute path globs, each
// real, none inside another.
func (x *linkIndex) walkRoots() []string {
	var roots []string
	add := func(dir string) {
		if dir == "" {
			return
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		for i, r := range roots {
			switch {
			case within(r, dir):
				return
			case within(dir, r):
				roots[i] = dir
				return
			}
		}
		roots = append(roots, dir)
	}
	if x.p.realRoot != "" {
		add(x.p.realRoot)
	} else {
		add(x.p.cwd)
	}
	for _, c := range x.p.rules {
		for _, pp := range c.paths {
			if pp.abs {
				add(literalDir(pp.raw))
			}
		}
	}
	return roots
}

// literalDir is the folder part of an absolute glob before its first glob
// character ("/etc/ssh/*_key" → "/etc/ssh").
func literalDir(glob string) string {
	i := strings.IndexAny(glob, "*?[{\\")
	if i < 0 {
		return filepath.Clean(glob)
	}
	return filepath.Dir(glob[:i] + "x")
}

// within reports whether path is dir or beneath it.
func within(dir, path string) bool {
	return dir == path || dir == "/" || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// walk indexes the roots.
func (x *linkIndex) walk() {
	x.roots = x.walkRoots()
	x.files = map[fileID][]string{}
	seen := 0
	for _, root := range x.roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // an unreadable folder: its files cannot be read either
			}
			if seen++; seen > MaxLinkWalk {
				x.stopped = true
				return filepath.SkipAll
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			if id, nlink, ok := identity(info); ok && nlink > 1 {
				x.files[id] = append(x.files[id], path)
			}
			return nil
		})
		if err != nil || x.stopped {
			break
		}
	}
}

// folder lists the regular files with more than one link of one folder
// that no root holds.
func (x *linkIndex) folder(dir string) map[fileID][]string {
	x.mu.Lock()
	defer x.mu.Unlock()
	if m, ok := x.folders[dir]; ok {
		return m
	}
	m := map[fileID][]string{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents[:min(len(ents), MaxLinkWalk)] {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if id, nlink, ok := identity(info); ok && nlink > 1 {
			m[id] = append(m[id], filepath.Join(dir, e.Name()))
		}
	}
	if x.folders == nil {
		x.folders = map[string]map[fileID][]string{}
	}
	x.folders[dir] = m
	return m
}

// links returns the paths found for t's file (t's own among them when the
// walk passed it), and whether they are all its links or the walk may
// have missed some.
func (x *linkIndex) links(t linkTarget) (paths []string, complete bool) {
	x.once.Do(x.walk)
	paths = x.files[t.id]
	dir := filepath.Dir(t.path)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	inRoot := false
	for _, r := range x.roots {
		if within(r, dir) {
			inRoot = true
			break
		}
	}
	if !inRoot {
		for _, p := range x.folder(dir)[t.id] {
			if !contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	return paths, !x.stopped || uint64(len(paths)) >= t.nlink
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// linkMatch reports whether the deny or ask rule r matches another link
// of a file the call names (its real paths and its paths as written); the
// reason is noted for the result.
func (c *callView) linkMatch(r *compiled) bool {
	if c.targets == nil { // unless the caller knew them
		c.targets = []linkTarget{}
		seen := map[string]bool{}
		for _, p := range append(append([]string{}, c.paths...), c.lexicalPaths()...) {
			if seen[p] {
				continue
			}
			seen[p] = true
			if t, ok := linkTargetOf(p); ok {
				c.targets = append(c.targets, t)
			}
		}
	}
	if len(c.targets) == 0 {
		return false
	}
	if c.links == nil {
		c.links = c.p.newLinkIndex()
	}
	for _, t := range c.targets {
		links, complete := c.links.links(t)
		for _, l := range links {
			if l != t.path && r.matchPath(filepath.ToSlash(l), c.p.rel(l, true)) {
				c.note(r, fmt.Sprintf("%s is a hard link of %s", c.p.shown(t.path), c.p.shown(l)))
				return true
			}
		}
		if !complete {
			c.note(r, fmt.Sprintf("%s has %d hard links and pi stopped looking for them after %d entries, so it cannot tell that none is protected", c.p.shown(t.path), t.nlink, MaxLinkWalk))
			return true
		}
	}
	return false
}

// note records why r matched through a hard link.
func (c *callView) note(r *compiled, why string) {
	if c.linkNotes == nil {
		c.linkNotes = map[*compiled]string{}
	}
	c.linkNotes[r] = why
}

// shown is a path as messages show it: relative to the project root when
// inside it.
func (p *Policy) shown(path string) string {
	if rel := p.rel(path, false); rel != "" && rel != "." {
		return rel
	}
	if rel := p.rel(path, true); rel != "" && rel != "." {
		return rel
	}
	return path
}
