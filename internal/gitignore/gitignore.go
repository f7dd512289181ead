// Package gitignore owns the .gitignore matcher (gitignore(5) and git's
// wildmatch) and the directory walk that honours it, shared by the grep and
// find tools: Walk visits a tree in a fixed order, skipping .git and what
// the .gitignore files (nested, above the root up to the repository, and
// .git/info/exclude) exclude, without following symbolic links.
package gitignore

import (
	"bytes"
	"os"
	"strings"
)

// This file holds the .gitignore matcher used by the directory walk (walk.go)
// of grep and find. It follows gitignore(5) and git's wildmatch:
//
//   - blank lines and lines starting with '#' are skipped; trailing spaces are
//     dropped unless escaped with '\'; a UTF-8 BOM and a trailing '\r' are
//     dropped;
//   - a leading '!' negates (re-includes); '\!' and '\#' are literal;
//   - a trailing '/' matches directories only;
//   - a pattern with a '/' at the start or in the middle is anchored to the
//     directory of its .gitignore; otherwise it matches the last path
//     component at any depth below that directory;
//   - '*' and '?' never match '/'; '[...]' classes take '!' or '^' for
//     negation, ranges and [:class:] names; '\' escapes the next character;
//   - '**/' at the start, '/**/' in the middle and '/**' at the end match any
//     number of directories; any other '**' is a plain '*';
//   - within one file the last matching line wins; a deeper .gitignore wins
//     over a shallower one; a path under an ignored directory stays ignored
//     (the walk never enters the directory).
//
// The third-party matchers were weighed: github.com/sabhiram/go-gitignore (in
// go.mod) matches on paths without knowing whether they are directories, so
// "build/" cannot be told from a file named build, and it has no notion of the
// directory a nested .gitignore lives in; go-git's plumbing/format/gitignore
// would pull the whole go-git module graph into go.mod for ~300 lines of
// logic. The code here is checked against git in gitignore_test.go.

// ignoreRule is one pattern line of a .gitignore file.
type ignoreRule struct {
	glob     string // the pattern without '!', leading '/' and trailing '/'
	negate   bool   // line started with '!'
	dirOnly  bool   // line ended with '/'
	anchored bool   // a '/' at the start or in the middle
	// shape is how the rule matches a name when it is a simple one
	// (shapeGlob: wildmatch).
	shape ruleShape
	lit   string // the literal part of a simple shape
}

// ruleShape is the form of an unanchored rule that can be matched without
// wildmatch: the usual `name`, `*.ext`, `prefix*` and `*`.
type ruleShape uint8

const (
	shapeGlob   ruleShape = iota // anything else: wildmatch
	shapeExact                   // LIT
	shapeSuffix                  // *LIT
	shapePrefix                  // LIT*
	shapeAny                     // *
)

// simpleShape reads an unanchored rule's glob as one of the simple shapes.
// LIT holds none of wildmatch's special bytes ('*', '?', '[', '\') and
// no '/', so on a name (which has no '/') the shape answers as wildmatch
// does: a '*' there matches any run of bytes.
func simpleShape(glob string) (ruleShape, string) {
	lit := glob
	lead := strings.HasPrefix(lit, "*")
	lit = strings.TrimPrefix(lit, "*")
	trail := strings.HasSuffix(lit, "*")
	lit = strings.TrimSuffix(lit, "*")
	switch {
	case strings.ContainsAny(lit, "*?[\\/"):
		return shapeGlob, ""
	case lit == "" && lead && !trail:
		return shapeAny, ""
	case lead && trail:
		return shapeGlob, "" // *LIT*: rare, left to wildmatch
	case lead:
		return shapeSuffix, lit
	case trail:
		return shapePrefix, lit
	case lit == "":
		return shapeGlob, ""
	}
	return shapeExact, lit
}

// matchName matches an unanchored rule against a name.
func (r *ignoreRule) matchName(name string) bool {
	switch r.shape {
	case shapeExact:
		return name == r.lit
	case shapeSuffix:
		return strings.HasSuffix(name, r.lit)
	case shapePrefix:
		return strings.HasPrefix(name, r.lit)
	case shapeAny:
		return true
	}
	return wildmatch(r.glob, name)
}

// ignoreFile is the rules of one .gitignore (or .git/info/exclude) with the
// directory they are relative to, as a slash path from the walk's top ("" for
// the top itself).
type ignoreFile struct {
	base  string
	rules []ignoreRule
}

// parseIgnore parses the text of a .gitignore file.
func parseIgnore(data []byte) []ignoreRule {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var rules []ignoreRule
	for _, line := range strings.Split(string(data), "\n") {
		if r, ok := parseIgnoreLine(line); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

// parseIgnoreLine parses one line; ok is false for blanks and comments.
func parseIgnoreLine(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimUnescapedSpaces(line)
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	var r ignoreRule
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	r.glob = line
	if !r.anchored {
		r.shape, r.lit = simpleShape(line)
	}
	return r, true
}

// trimUnescapedSpaces drops trailing spaces that are not escaped by '\'.
func trimUnescapedSpaces(s string) string {
	end := len(s)
	for end > 0 && s[end-1] == ' ' {
		// Count the backslashes before this space: an odd number escapes it.
		n := 0
		for i := end - 2; i >= 0 && s[i] == '\\'; i-- {
			n++
		}
		if n%2 == 1 {
			break
		}
		end--
	}
	return s[:end]
}

// readIgnoreFile reads a .gitignore-format file; a missing or unreadable file
// has no rules.
func readIgnoreFile(name, base string) *ignoreFile {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	rules := parseIgnore(data)
	if len(rules) == 0 {
		return nil
	}
	return &ignoreFile{base: base, rules: rules}
}

// ignoreStack is the .gitignore files that apply at one point of a walk,
// shallowest first.
type ignoreStack []*ignoreFile

// ignoreAt is one ignore file as seen from a directory: rel is the
// directory's path from the file's base ("" when it is the base); a file
// whose base is not above the directory has none.
type ignoreAt struct {
	f     *ignoreFile
	rel   string
	apply bool
}

// at works out, for the directory dir (a slash path from the top, "" for
// the top), where it is from each file of the stack.
func (s ignoreStack) at(dir string) []ignoreAt {
	out := make([]ignoreAt, len(s))
	for i, f := range s {
		out[i].f = f
		switch {
		case f.base == "":
			out[i].rel, out[i].apply = dir, true
		case dir == f.base:
			out[i].apply = true
		case strings.HasPrefix(dir, f.base) && dir[len(f.base)] == '/':
			out[i].rel, out[i].apply = dir[len(f.base)+1:], true
		}
	}
	return out
}

// ignoredAt reports whether the entry name of the directory the files are
// seen from is ignored: the last rule that matches decides, the deepest
// file first. Rules without a '/' look at the name only; anchored ones at
// the path from their file's base, built only when such a rule is met.
func ignoredAt(at []ignoreAt, name string, isDir bool) bool {
	for i := len(at) - 1; i >= 0; i-- {
		a := &at[i]
		if !a.apply {
			continue
		}
		full := ""
		rules := a.f.rules
		for j := len(rules) - 1; j >= 0; j-- {
			r := &rules[j]
			if r.dirOnly && !isDir {
				continue
			}
			if !r.anchored {
				if r.matchName(name) {
					return !r.negate
				}
				continue
			}
			if full == "" {
				full = name
				if a.rel != "" {
					full = a.rel + "/" + name
				}
			}
			if wildmatch(r.glob, full) {
				return !r.negate
			}
		}
	}
	return false
}

// wildmatch matches text against a gitignore glob with git's WM_PATHNAME
// rules: '*', '?' and classes stop at '/', and only a '**' that stands as a
// whole path component crosses directories. Like git it works on bytes ('?'
// is one byte), and like git it gives up early: once the text runs out or a
// '*' reaches a '/', trying later starting points cannot help, which keeps
// patterns with many stars from taking exponential time.
func wildmatch(pattern, text string) bool {
	return wildmatchAt(pattern, 0, text) == wmMatch
}

// The outcomes of wildmatchAt, as in git's wildmatch.c.
const (
	wmNoMatch         = iota
	wmMatch           // matched
	wmAbortAll        // no later starting point of any enclosing star can match
	wmAbortToStarStar // only an enclosing '**' may still match
)

func wildmatchAt(pat string, pi int, text string) int {
	for pi < len(pat) {
		c := pat[pi]
		if text == "" && c != '*' {
			return wmAbortAll
		}
		switch c {
		case '\\':
			if pi+1 >= len(pat) || text[0] != pat[pi+1] {
				return wmNoMatch // a trailing backslash matches nothing, as in git
			}
			pi += 2
			text = text[1:]
		case '?':
			if text[0] == '/' {
				return wmNoMatch
			}
			pi++
			text = text[1:]
		case '[':
			if text[0] == '/' {
				return wmNoMatch
			}
			ok, next, valid := matchClass(pat, pi, text[0])
			if !valid {
				// An unterminated '[' is a literal character.
				if text[0] != '[' {
					return wmNoMatch
				}
				pi++
				text = text[1:]
				continue
			}
			if !ok {
				return wmNoMatch
			}
			pi = next
			text = text[1:]
		case '*':
			start := pi
			for pi < len(pat) && pat[pi] == '*' {
				pi++
			}
			double := pi-start >= 2 &&
				(start == 0 || pat[start-1] == '/') &&
				(pi == len(pat) || pat[pi] == '/')
			if double {
				if pi == len(pat) {
					return wmMatch // trailing "/**" (or a lone "**"): everything below
				}
				// "**/": zero or more whole directories.
				rest := pi + 1
				if r := wildmatchAt(pat, rest, text); r == wmMatch {
					return r
				}
				for i := 0; i < len(text); i++ {
					if text[i] != '/' {
						continue
					}
					if r := wildmatchAt(pat, rest, text[i+1:]); r == wmMatch || r == wmAbortAll {
						return r
					}
				}
				return wmAbortAll
			}
			if pi == len(pat) {
				if strings.Contains(text, "/") {
					return wmAbortToStarStar
				}
				return wmMatch
			}
			for i := 0; i < len(text); i++ {
				if r := wildmatchAt(pat, pi, text[i:]); r != wmNoMatch {
					return r
				}
				if text[i] == '/' {
					return wmAbortToStarStar
				}
			}
			return wmAbortAll
		default:
			if text[0] != c {
				return wmNoMatch
			}
			pi++
			text = text[1:]
		}
	}
	if text == "" {
		return wmMatch
	}
	return wmNoMatch
}

// classNames are the POSIX character classes git's wildmatch knows.
var classNames = map[string]func(rune) bool{
	"alnum":  func(r rune) bool { return isASCIIAlpha(r) || isASCIIDigit(r) },
	"alpha":  isASCIIAlpha,
	"blank":  func(r rune) bool { return r == ' ' || r == '\t' },
	"cntrl":  func(r rune) bool { return r < 0x20 || r == 0x7f },
	"digit":  isASCIIDigit,
	"graph":  func(r rune) bool { return r > 0x20 && r < 0x7f },
	"lower":  func(r rune) bool { return r >= 'a' && r <= 'z' },
	"print":  func(r rune) bool { return r >= 0x20 && r < 0x7f },
	"punct":  func(r rune) bool { return r > 0x20 && r < 0x7f && !isASCIIAlpha(r) && !isASCIIDigit(r) },
	"space":  func(r rune) bool { return r == ' ' || (r >= '\t' && r <= '\r') },
	"upper":  func(r rune) bool { return r >= 'A' && r <= 'Z' },
	"xdigit": func(r rune) bool { return isASCIIDigit(r) || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F') },
}

func isASCIIAlpha(r rune) bool { return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') }
func isASCIIDigit(r rune) bool { return r >= '0' && r <= '9' }

// matchClass matches the byte b against the bracket expression starting at
// pat[pi] ('['). It returns whether b matched, the index after the closing
// ']', and whether the expression was well formed. Like git it works on
// bytes.
func matchClass(pat string, pi int, b byte) (matched bool, next int, valid bool) {
	i := pi + 1
	negate := false
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		negate = true
		i++
	}
	first := true
	for i < len(pat) {
		if pat[i] == ']' && !first {
			return matched != negate, i + 1, true
		}
		first = false
		if strings.HasPrefix(pat[i:], "[:") {
			if end := strings.Index(pat[i+2:], ":]"); end >= 0 {
				if fn, ok := classNames[pat[i+2:i+2+end]]; ok {
					if fn(rune(b)) {
						matched = true
					}
					i += 2 + end + 2
					continue
				}
			}
		}
		lo, n := classByte(pat, i)
		if n == 0 {
			return false, 0, false
		}
		i += n
		hi := lo
		if i+1 < len(pat) && pat[i] == '-' && pat[i+1] != ']' {
			h, m := classByte(pat, i+1)
			if m == 0 {
				return false, 0, false
			}
			hi = h
			i += 1 + m
		}
		if lo <= b && b <= hi {
			matched = true
		}
	}
	return false, 0, false
}

// classByte reads one (possibly '\'-escaped) byte of a bracket expression;
// n is 0 at the end of the pattern.
func classByte(pat string, i int) (byte, int) {
	if i >= len(pat) {
		return 0, 0
	}
	if pat[i] == '\\' {
		if i+1 >= len(pat) {
			return 0, 0
		}
		return pat[i+1], 2
	}
	return pat[i], 1
}
