// Package execgrant owns the grammar of exec grants (`grants.exec` in
// pi.toml, `--grant exec=` of `pi ext install`): what a pattern may look
// like, which argv it allows, and which granted commands can run arbitrary
// code. Config validation, the extension host's matcher and the install
// warning all call this package, so the three cannot disagree.
//
// # Grammar
//
// A pattern without an unescaped space is a command name: it allows any
// arguments and matches argv[0] exactly or as a path.Match glob ("git",
// "git-*", "/usr/bin/git"); `*` there does not cross a '/'.
//
// A pattern with an unescaped space also fixes the arguments. It is matched
// against the whole argv as if joined by single spaces, where
//
//   - a space in the pattern matches only the boundary between two argv
//     elements, never a space inside one (so "git status" does not match
//     argv ["git status"] nor ["git", "status x"]);
//   - `*` matches any run of characters, including none, spaces inside
//     elements, '/' and the boundaries between elements;
//   - `?` matches exactly one character inside an element (not a boundary);
//   - `\` makes the next character literal: `\*`, `\?`, `\\`, and `\ ` for a
//     space inside one element;
//   - everything else, '[' included, is literal.
//
// So "git status*" allows `git status`, `git status --porcelain` and
// `git status -s -- src`, and refuses `git -c alias.x=!sh x`, `git log` and
// argv ["sh", "-c", "git status"]. Write "git status" plus "git status *"
// to refuse `git statusx` as well.
package execgrant

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Pattern is one parsed exec grant.
type Pattern struct {
	source string
	// name is set for a command-name pattern (no unescaped space).
	name string
	// toks is the argument pattern otherwise.
	toks []token
}

type tokenKind uint8

const (
	tokLit  tokenKind = iota // one literal rune
	tokSep                   // the boundary between two argv elements
	tokOne                   // ? : one rune inside an element
	tokStar                  // * : any run, boundaries included
)

type token struct {
	kind tokenKind
	r    rune
}

// Parse checks a pattern and prepares it for matching.
//
// # Errors
//
// Parse refuses an empty pattern, one that is not UTF-8 or holds a NUL or
// another control character, one that starts with a space or ends in a lone
// `\`, and a command-name pattern that is not a valid path.Match glob.
func Parse(s string) (Pattern, error) {
	p, err := parse(s)
	if err != nil {
		return Pattern{}, fmt.Errorf("bad exec pattern %q: %w", s, err)
	}
	return p, nil
}

func parse(s string) (Pattern, error) {
	switch {
	case s == "":
		return Pattern{}, errors.New("empty; name a command, e.g. \"git\" or \"git status*\"")
	case !utf8.ValidString(s):
		return Pattern{}, errors.New("not UTF-8")
	case strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return Pattern{}, errors.New("it holds a control character")
	case strings.HasPrefix(s, " "):
		return Pattern{}, errors.New("it starts with a space; start with the command")
	}
	var toks []token
	spaced := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch r {
		case '\\':
			if i >= len(s) {
				return Pattern{}, errors.New("it ends in a lone \\ (write \\\\ for a backslash)")
			}
			r, n = utf8.DecodeRuneInString(s[i:])
			i += n
			toks = append(toks, token{kind: tokLit, r: r})
		case ' ':
			spaced = true
			toks = append(toks, token{kind: tokSep})
		case '?':
			toks = append(toks, token{kind: tokOne})
		case '*':
			toks = append(toks, token{kind: tokStar})
		default:
			toks = append(toks, token{kind: tokLit, r: r})
		}
	}
	if !spaced {
		if _, err := path.Match(s, ""); err != nil {
			return Pattern{}, err
		}
		return Pattern{source: s, name: s}, nil
	}
	return Pattern{source: s, toks: toks}, nil
}

// Validate reports whether s is a valid exec pattern, with Parse's error.
func Validate(s string) error {
	_, err := Parse(s)
	return err
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.source }

// HasArgs reports whether the pattern fixes the arguments (it has a space).
func (p Pattern) HasArgs() bool { return p.toks != nil }

// Match reports whether the pattern allows running argv. An empty argv, an
// empty argv[0] and any element holding a NUL never match.
func (p Pattern) Match(argv []string) bool {
	if len(argv) == 0 || argv[0] == "" {
		return false
	}
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return false
		}
	}
	if p.toks == nil {
		if p.name == argv[0] {
			return true
		}
		ok, err := path.Match(p.name, argv[0])
		return err == nil && ok
	}
	return matchTokens(p.toks, subject(argv))
}

// sep stands for the boundary between argv elements in a subject; invalid
// UTF-8 bytes become negative values below it, so no literal matches them.
const sep = -1

// subject spells argv as runes with sep between the elements.
func subject(argv []string) []rune {
	var out []rune
	for i, a := range argv {
		if i > 0 {
			out = append(out, sep)
		}
		for j := 0; j < len(a); {
			r, n := utf8.DecodeRuneInString(a[j:])
			if r == utf8.RuneError && n == 1 {
				r = -2 - rune(a[j])
			}
			out = append(out, r)
			j += n
		}
	}
	return out
}

// matchTokens is a wildcard match where `*` is the only token matching a
// variable length, so remembering the last star and retrying from one
// further on is enough (linear backtracking, no recursion).
func matchTokens(toks []token, s []rune) bool {
	ti, si := 0, 0
	star, starSi := -1, 0
	for si < len(s) {
		if ti < len(toks) {
			t := toks[ti]
			switch {
			case t.kind == tokStar:
				star, starSi = ti, si
				ti++
				continue
			case t.kind == tokLit && s[si] == t.r,
				t.kind == tokSep && s[si] == sep,
				t.kind == tokOne && s[si] != sep:
				ti++
				si++
				continue
			}
		}
		if star < 0 {
			return false
		}
		starSi++
		ti, si = star+1, starSi
	}
	for ti < len(toks) && toks[ti].kind == tokStar {
		ti++
	}
	return ti == len(toks)
}

// Allowed reports whether any of patterns allows argv. Patterns that do not
// parse allow nothing (config validation refuses them at load).
func Allowed(patterns []string, argv []string) bool {
	for _, s := range patterns {
		p, err := Parse(s)
		if err == nil && p.Match(argv) {
			return true
		}
	}
	return false
}
