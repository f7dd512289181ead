package tui

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// maxCompletions bounds the names a completion lists.
const maxCompletions = 50

// @PATH attachments are read by the conversation (conversation.Attach), as
// in the line mode; the TUI only completes the paths as they are typed.

// resolvePath makes a typed path absolute: ~/ is the home folder, a
// relative path is under cwd.
func resolvePath(cwd, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// completePath completes the @path word that ends at the cursor: the
// names in its folder that start with what was typed (dot files only when
// a dot was typed; folders end in /). It returns the candidates, sorted.
func completePath(cwd, typed string) []string {
	dirPart, base := "", typed
	if i := strings.LastIndexByte(typed, '/'); i >= 0 {
		dirPart, base = typed[:i+1], typed[i+1:]
	}
	dir := cwd
	if dirPart != "" {
		dir = resolvePath(cwd, dirPart)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, base) || (strings.HasPrefix(n, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		full := dirPart + n
		if e.IsDir() {
			full += "/"
		} else if e.Type()&os.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(dir, n)); err == nil && st.IsDir() {
				full += "/"
			}
		}
		out = append(out, full)
		if len(out) >= maxCompletions {
			break
		}
	}
	sort.Strings(out)
	return out
}

// commonPrefix is the longest prefix all of ss share.
func commonPrefix(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	for !utf8.ValidString(p) {
		p = p[:len(p)-1]
	}
	return p
}
