package builtin

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/text/unicode/norm"

	"github.com/pi-go/pi/internal/atomicfile"
)

// unicodeSpaces are the space characters models and terminals slip into
// paths in place of a plain space.
var unicodeSpaces = strings.NewReplacer(
	"\u00A0", " ", "\u2000", " ", "\u2001", " ", "\u2002", " ", "\u2003", " ",
	"\u2004", " ", "\u2005", " ", "\u2006", " ", "\u2007", " ", "\u2008", " ",
	"\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
)

// amPM matches the " AM." / " PM." of a macOS screenshot name; compiled
// on first use (package init runs on every start of pi).
var amPM = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i) (AM|PM)\.`) })

// resolvePath turns a path the model gave into an absolute path: "~" and
// "~/" expand to the home directory, relative paths are joined to cwd (the
// process's working directory when cwd is empty). A leading "@" is dropped,
// and Unicode spaces (U+00A0, U+2000–U+200A, U+202F, U+205F, U+3000) are read
// as plain spaces, but only when the path as given does not exist; when no
// form exists the fully normalized one is returned.
func resolvePath(cwd, p string) string {
	literal := absPath(cwd, expandHome(p))
	if pathExists(literal) {
		return literal
	}
	var candidates []string
	noAt := p
	if strings.HasPrefix(p, "@") {
		noAt = p[1:]
		candidates = append(candidates, noAt)
	}
	if spaced := unicodeSpaces.Replace(p); spaced != p {
		candidates = append(candidates, spaced)
	}
	if both := unicodeSpaces.Replace(noAt); both != noAt && noAt != p {
		candidates = append(candidates, both)
	}
	if len(candidates) == 0 {
		return literal
	}
	for _, c := range candidates {
		if r := absPath(cwd, expandHome(c)); pathExists(r) {
			return r
		}
	}
	return absPath(cwd, expandHome(unicodeSpaces.Replace(noAt)))
}

// resolveReadPath is resolvePath plus, when that path does not exist, the
// macOS screenshot variants: a narrow no-break space before AM/PM, the NFD
// form, a curly apostrophe, and NFD with a curly apostrophe. The first that
// exists wins; otherwise the resolvePath result is returned.
func resolveReadPath(cwd, p string) string {
	resolved := resolvePath(cwd, p)
	if pathExists(resolved) {
		return resolved
	}
	nfd := norm.NFD.String(resolved)
	for _, v := range []string{
		amPM().ReplaceAllString(resolved, "\u202F$1."),
		nfd,
		strings.ReplaceAll(resolved, "'", "\u2019"),
		strings.ReplaceAll(nfd, "'", "\u2019"),
	} {
		if v != resolved && pathExists(v) {
			return v
		}
	}
	return resolved
}

func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return home + p[1:]
}

func absPath(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if cwd == "" {
		if wd, err := os.Getwd(); err == nil {
			cwd = wd
		}
	}
	return filepath.Join(cwd, p)
}

func pathExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// realPath returns where opening p really lands, every symlink followed as
// the kernel follows them: atomicfile.Target, the one owner of the rule.
// write and edit write to realPath of the resolved path, and the paths that
// tool_call hooks see are realPath of what each tool opens.
func realPath(p string) string { return atomicfile.Target(p) }

// readTarget is the file a read call opens.
func readTarget(cwd, p string) string { return resolveReadPath(cwd, p) }

// writeTarget is the file a write or edit call writes.
func writeTarget(cwd, p string) string { return resolvePath(cwd, p) }

// searchTarget is the folder (or, for grep, the file) a grep, find or ls
// call starts from; nil means the working directory.
func searchTarget(cwd string, p *string) string { return resolvePath(cwd, deref(p, ".")) }
