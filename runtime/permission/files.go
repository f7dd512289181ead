package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
)

// FileFilter decides, for one call of a tool that lists or searches many
// files (grep, find and ls over a folder), which files and folders it
// leaves out: those that a deny or ask rule with path globs would stop a
// `read` of, or a call of the tool itself on — the match Check makes for a
// call naming that path, hard links included (links.go). A folder left out
// is not entered. Safe for concurrent use.
type FileFilter struct {
	p     *Policy
	rules []*compiled
	links *linkIndex
	dirs  sync.Map // folder (as walked) → its real path
}

// FileFilter returns the filter of one call of tool, or nil when no rule
// could leave a file out (nothing needs checking).
func (p *Policy) FileFilter(tool string) *FileFilter {
	var rules []*compiled
	seen := map[*compiled]bool{}
	for _, name := range []string{"read", tool} {
		for _, c := range p.rulesFor(name) {
			if c.paths == nil || c.command != nil || c.rule.Decision == Allow || seen[c] {
				continue
			}
			seen[c] = true
			rules = append(rules, c)
		}
	}
	if len(rules) == 0 {
		return nil
	}
	return &FileFilter{p: p, rules: rules, links: p.newLinkIndex()}
}

// Hides reports whether the file or folder at the absolute path (as the
// tool walked to it, links not followed) is left out.
func (f *FileFilter) Hides(path string) bool {
	path = filepath.Clean(path)
	real, info := f.realPath(path)
	call := &callView{p: f.p, paths: []string{real}, lexical: []string{}, links: f.links}
	if real != path {
		call.lexical = []string{path}
	}
	if info != nil {
		// The file's links, from the stat realPath made (a link's target
		// is stat'ed by linkMatch).
		call.targets = []linkTarget{}
		if id, nlink, ok := identity(info); ok && nlink > 1 && info.Mode().IsRegular() {
			call.targets = append(call.targets, linkTarget{path: real, id: id, nlink: nlink})
		}
	}
	for _, c := range f.rules {
		if c.args != nil && call.input == nil {
			call.input, _ = json.Marshal(map[string]string{"path": path})
		}
		if call.pathsMatch(c) && (c.args == nil || c.matchArgs(call.value())) {
			return true
		}
	}
	return false
}

// realPath is path with every link resolved: its folder's real path
// (resolved once per folder) and, for a link, where it leads; the path
// itself when it does not resolve. info is the lstat of a path that is
// not a link, nil otherwise.
func (f *FileFilter) realPath(path string) (string, os.FileInfo) {
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	realDir, ok := f.dirs.Load(dir)
	if !ok {
		r, err := filepath.EvalSymlinks(dir)
		if err != nil {
			r = dir
		}
		realDir, _ = f.dirs.LoadOrStore(dir, r)
	}
	joined := filepath.Join(realDir.(string), name)
	info, err := os.Lstat(joined)
	switch {
	case err != nil:
		return joined, nil
	case info.Mode()&os.ModeSymlink != 0:
		if r, err := filepath.EvalSymlinks(joined); err == nil {
			return r, nil
		}
		return joined, nil
	}
	return joined, info
}
