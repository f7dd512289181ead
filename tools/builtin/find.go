package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/pi-go/pi/internal/gitignore"
	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/runtime/tool"
)

// findDefaultLimit is the number of paths find returns when the call gives
// no limit.
const findDefaultLimit = 1000

const findSchema = `{
  "type": "object",
  "required": ["pattern"],
  "properties": {
    "pattern": {"type": "string", "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"},
    "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
    "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"}
  }
}`

// findArgs are the arguments of a find call.
type findArgs struct {
	Pattern string   `json:"pattern"`
	Path    *string  `json:"path,omitempty"`
	Limit   *float64 `json:"limit,omitempty"`
}

// findDetails are the details of a find result. Zero fields are left out.
type findDetails struct {
	// ResultLimitReached is the limit when more paths than it matched.
	ResultLimitReached int `json:"resultLimitReached,omitempty"`
	// Truncation is set when the text was cut to 50KB.
	Truncation *output.Truncation `json:"truncation,omitempty"`
}

// findDefinition returns the find tool: paths below a directory whose name
// (or, for a pattern with a '/', whose relative path) matches a glob,
// honouring .gitignore and skipping .git/.
func findDefinition() tool.ToolDefinition {
	return define(toolMeta{
		name: "find",
		description: fmt.Sprintf("Search for files by glob pattern. Returns matching file paths relative to the search directory. "+
			"Respects .gitignore. Output is truncated to %d results or %dKB (whichever is hit first).", findDefaultLimit, output.DefaultMaxBytes/1024),
		parameters: findSchema,
		snippet:    "Find files by glob pattern (respects .gitignore)",
		strict:     true,
	}, func(ctx context.Context, _ tool.Call, tc tool.Context, args findArgs) (tool.Result, error) {
		return runFind(ctx, tc, args)
	}, func(cwd string, a *findArgs) string { return searchTarget(cwd, a.Path) })
}

// runFind runs one find call in the working directory cwd.
//
// The pattern is read as fd reads a glob: without a '/' it is matched against
// each entry's name at any depth; with a '/' it is matched against the path
// relative to the search directory, with `**/` put in front unless it starts
// with `**/`, `/` or `./` (a leading '/' or './' anchors it at the search
// directory; an absolute pattern inside the search directory is made
// relative). Matching
// ignores case when the pattern has no upper-case letter (fd's smart case).
// Directories match too and are listed with a trailing '/' (a pattern ending
// in '/' matches only directories, a fix: fd matched nothing); symbolic links
// are listed, never followed. Results come in walk order (sorted by path,
// component by component). Paths the permission rules keep from being read
// (tc.Hidden) are left out (a folder is not entered), and a note says how
// many matched.
//
// # Errors
//
// runFind fails with `Path not found: PATH`, `Not a directory: PATH`, an
// `invalid pattern` error, or `Operation aborted` when ctx is cancelled.
func runFind(ctx context.Context, tc tool.Context, args findArgs) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.Result{}, errSearchAborted
	}
	hidden := newHiddenPaths(tc)
	searchPath := searchTarget(tc.Cwd, args.Path)
	info, err := os.Stat(searchPath)
	if err != nil {
		return tool.Result{}, fmt.Errorf("Path not found: %s", searchPath) //nolint:staticcheck // model-visible text
	}
	if !info.IsDir() {
		return tool.Result{}, fmt.Errorf("Not a directory: %s", searchPath) //nolint:staticcheck // model-visible text
	}
	m, err := newFindMatcher(args.Pattern, searchPath)
	if err != nil {
		return tool.Result{}, err
	}
	limit := intArg(args.Limit, findDefaultLimit, 1)
	var found []string
	limitReached := false
	walk := func(e gitignore.Entry) error {
		if e.IsDir && hidden.hides(e.Path) {
			if m.match(e.Rel, e.IsDir) {
				hidden.add()
			}
			return fs.SkipDir
		}
		if !m.match(e.Rel, e.IsDir) {
			return nil
		}
		if !e.IsDir && hidden.skip(e.Path) {
			return nil
		}
		if len(found) == limit {
			limitReached = true
			return gitignore.ErrStop
		}
		if e.IsDir {
			found = append(found, e.Rel+"/")
		} else {
			found = append(found, e.Rel)
		}
		return nil
	}
	if hidden.skip(searchPath) {
		walk = func(gitignore.Entry) error { return gitignore.ErrStop }
	}
	err = gitignore.Walk(ctx, searchPath, walk)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, errSearchAborted
		}
		return tool.Result{}, err
	}
	if len(found) == 0 {
		return listingResult("No files found matching pattern", hidden.withNotice(nil), nil, false), nil
	}
	var details findDetails
	notices := hidden.withNotice(nil)
	if limitReached {
		notices = append(notices, fmt.Sprintf("%d results limit reached. Use limit=%d for more, or refine pattern", limit, limit*2))
		details.ResultLimitReached = limit
	}
	text, trunc := truncateListing(found)
	if trunc != nil {
		notices = append(notices, output.FormatSize(output.DefaultMaxBytes)+" limit reached")
		details.Truncation = trunc
	}
	return listingResult(text, notices, details, details != findDetails{}), nil
}

// findMatcher is a find pattern ready to match relative paths, compiled
// once per call: the common shapes (`*.go`, `**/*.go`, `*_test.go`,
// `Makefile`, `cmd*`, `*mock*`) become a byte comparison on the entry's
// name; the rest go to doublestar.
type findMatcher struct {
	pattern    string
	fullPath   bool
	foldCase   bool
	everything bool
	dirOnly    bool // the pattern ended in '/'
	// name is how a pattern that only looks at the last path element is
	// matched; nameGlob is doublestar on the whole subject.
	name nameMatch
}

// nameMatch is a name pattern of the form LIT, *LIT, LIT* or *LIT* (LIT
// without glob syntax), compared without doublestar.
type nameMatch struct {
	kind nameKind
	lit  string
}

type nameKind uint8

const (
	nameGlob     nameKind = iota // not a simple shape: doublestar
	nameExact                    // LIT
	nameSuffix                   // *LIT
	namePrefix                   // LIT*
	nameContains                 // *LIT*
	nameAny                      // *
)

// compileName reads p (a pattern for one path element) as one of the
// simple shapes.
func compileName(p string) nameMatch {
	lit := p
	lead := strings.HasPrefix(lit, "*")
	lit = strings.TrimPrefix(lit, "*")
	trail := strings.HasSuffix(lit, "*")
	lit = strings.TrimSuffix(lit, "*")
	if strings.ContainsAny(lit, "*?[]{}\\/") || !utf8.ValidString(lit) || strings.ContainsRune(lit, utf8.RuneError) {
		// doublestar compares runes: invalid bytes all read as U+FFFD
		return nameMatch{}
	}
	switch {
	case lit == "" && (lead || trail):
		return nameMatch{kind: nameAny}
	case lead && trail:
		return nameMatch{kind: nameContains, lit: lit}
	case lead:
		return nameMatch{kind: nameSuffix, lit: lit}
	case trail:
		return nameMatch{kind: namePrefix, lit: lit}
	}
	return nameMatch{kind: nameExact, lit: lit}
}

// matchName matches name (already lower-cased when the pattern folds case).
func (n nameMatch) matchName(name string) bool {
	switch n.kind {
	case nameExact:
		return name == n.lit
	case nameSuffix:
		return strings.HasSuffix(name, n.lit)
	case namePrefix:
		return strings.HasPrefix(name, n.lit)
	case nameContains:
		return strings.Contains(name, n.lit)
	}
	return true // nameAny
}

func newFindMatcher(pattern, searchPath string) (*findMatcher, error) {
	if pattern == "" {
		return nil, errors.New("invalid pattern: must not be empty (use '*' to match every name)")
	}
	m := &findMatcher{}
	p := filepath.ToSlash(pattern)
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		m.dirOnly = true
		p = strings.TrimRight(p, "/")
	}
	if strings.Contains(p, "/") {
		m.fullPath = true
		root := filepath.ToSlash(searchPath) + "/"
		switch {
		case strings.HasPrefix(p, root):
			p = p[len(root):]
		case strings.HasPrefix(p, "./"):
			p = strings.TrimLeft(p[2:], "/")
		case strings.HasPrefix(p, "/"):
			p = strings.TrimLeft(p, "/")
		case strings.HasPrefix(p, "**/"), p == "**":
		default:
			p = "**/" + p
		}
	}
	if p == "**" {
		m.everything = true
	}
	if !strings.ContainsFunc(p, unicode.IsUpper) {
		m.foldCase = true
	}
	if p == "" || !doublestar.ValidatePattern(p) {
		return nil, fmt.Errorf("invalid pattern %q: not a valid glob pattern", pattern)
	}
	m.pattern = p
	// `**/NAME` matches NAME against the last element at any depth, as a
	// pattern without '/' does.
	switch {
	case !m.fullPath:
		m.name = compileName(p)
	case strings.HasPrefix(p, "**/") && !strings.Contains(p[3:], "/") && !strings.HasPrefix(p[3:], "**"):
		m.name = compileName(p[3:])
	}
	return m, nil
}

func (m *findMatcher) match(rel string, isDir bool) bool {
	if m.dirOnly && !isDir {
		return false
	}
	if m.everything {
		return true
	}
	if m.name.kind != nameGlob {
		name := rel[strings.LastIndexByte(rel, '/')+1:]
		if m.foldCase {
			name = lowerName(name)
		}
		return m.name.matchName(name)
	}
	subject := rel
	if !m.fullPath {
		subject = filepath.Base(rel)
	}
	if m.foldCase {
		subject = strings.ToLower(subject)
	}
	return doublestar.MatchUnvalidated(m.pattern, subject)
}

// lowerName is strings.ToLower without its allocation for the usual name:
// ASCII with no upper-case letter is returned as it is.
func lowerName(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || ('A' <= c && c <= 'Z') {
			return strings.ToLower(s)
		}
	}
	return s
}
