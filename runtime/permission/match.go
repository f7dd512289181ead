package permission

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// matchCommand reports whether the rule's command prefix matches cmd. An
// allow rule matches strictly: word for word from the start, literal words
// only, and a command written with a path only when that path is a system
// folder (or the rule names the path). Deny and ask rules match loosely, as
// an attacker would try to slip past them: options (and the values they may
// take) between the command and a subcommand are skipped (`git -C dir
// push`), options are found anywhere and short ones in any cluster (`rm -r
// -f` for "-rf"), a dynamic word matches any word, and a command whose
// words continue on its input (xargs) matches when what is shown agrees.
func (c *compiled) matchCommand(cmd *command) bool {
	if len(cmd.argv) == 0 || !cmd.argv[0].lit {
		return false
	}
	strict := c.rule.Decision == Allow
	if !matchName(c.command[0], cmd.argv[0].s, strict) {
		return false
	}
	if strict {
		return strictArgs(c.command[1:], cmd.argv[1:])
	}
	name := strings.ToLower(path.Base(cmd.argv[0].s))
	return looseArgs(c.command[1:], cmd.argv[1:], cmd.open, flagOnlyOptions[name], optionAliases[name])
}

// systemDirs are the folders whose programs an allow rule's bare name
// covers when the command is written with its path.
var systemDirs = map[string]bool{
	"/bin": true, "/usr/bin": true, "/usr/local/bin": true, "/sbin": true, "/usr/sbin": true,
	"/usr/local/sbin": true, "/opt/homebrew/bin": true,
}

func matchName(p wordPattern, name string, strict bool) bool {
	if p.slash {
		if p.match(name) {
			return true
		}
		return !strict && p.match(path.Dir(p.raw)+"/"+path.Base(name)) && !strings.Contains(p.raw, "*")
	}
	base := path.Base(name)
	if !p.match(base) {
		// On a case-insensitive file system (macOS) CURL runs curl: deny
		// and ask rules match the name in any case.
		return !strict && p.matchFold(base)
	}
	if strict && strings.Contains(name, "/") && !systemDirs[path.Dir(name)] {
		return false
	}
	return true
}

// matchFold matches s ignoring case.
func (w wordPattern) matchFold(s string) bool {
	switch {
	case w.any:
		return true
	case w.re != nil:
		return w.fold != nil && w.fold.MatchString(s)
	}
	return strings.EqualFold(w.raw, s)
}

func strictArgs(ps []wordPattern, argv []word) bool {
	if len(argv) < len(ps) {
		return false
	}
	for i, p := range ps {
		w := argv[i]
		if p.any {
			if !w.lit && w.split {
				return false
			}
			continue
		}
		if !w.lit || !p.match(w.s) {
			return false
		}
	}
	return true
}

// looseArgs matches the positional words of ps in order (skipping options,
// and words that may be their values, between them) and the option words
// of ps anywhere.
func looseArgs(ps []wordPattern, argv []word, open bool, flagOnly map[string]bool, aliases map[string]string) bool {
	var positional []wordPattern
	for _, p := range ps {
		if !p.option {
			positional = append(positional, p)
			continue
		}
		if !hasOption(p, argv) && !hasAliasedOption(p, argv, aliases) && !open {
			return false
		}
	}
	steps := 0
	return matchPositional(positional, argv, 0, open, flagOnly, &steps)
}

// maxSteps bounds the backtracking of one match.
const maxSteps = 10_000

func matchPositional(ps []wordPattern, argv []word, at int, open bool, flagOnly map[string]bool, steps *int) bool {
	if len(ps) == 0 {
		return true
	}
	if *steps > maxSteps {
		return true // too costly to tell: count it as a match (strictest)
	}
	p := ps[0]
	endOpts := false
	for j := at; j < len(argv); j++ {
		*steps++
		w := argv[j]
		if !w.lit || p.match(w.s) {
			if matchPositional(ps[1:], argv, j+1, open, flagOnly, steps) {
				return true
			}
			// A word that splits may fill several pattern words.
			if !w.lit && w.split && matchPositional(ps[1:], argv, j, open, flagOnly, steps) {
				return true
			}
		}
		// May the command still come later? Only past options and the
		// words that may be their values.
		switch {
		case !w.lit:
		case w.s == "--" && !endOpts:
			endOpts = true
		case !endOpts && len(w.s) > 1 && w.s[0] == '-':
		case j > at && maybeValue(argv[j-1], flagOnly) && !endOpts:
		default:
			return false
		}
	}
	return open
}

// maybeValue reports whether the word after w may be w's value.
func maybeValue(w word, flagOnly map[string]bool) bool {
	if !w.lit {
		return true
	}
	s := w.s
	if len(s) < 2 || s[0] != '-' || s == "--" || strings.Contains(s, "=") {
		return false
	}
	return !flagOnly[s]
}

// hasOption reports whether an option pattern is among argv: the same word,
// --long=value for --long, or every letter of a short cluster (-rf) among
// the short options (-r -f, -fr, -Rfv).
func hasOption(p wordPattern, argv []word) bool {
	cluster := !p.any && p.re == nil && len(p.raw) > 2 && p.raw[0] == '-' && p.raw[1] != '-' && isLetters(p.raw[1:])
	if cluster {
		for _, l := range p.raw[1:] {
			found := false
			for _, w := range argv {
				if !w.lit || (len(w.s) > 1 && w.s[0] == '-' && w.s[1] != '-' && isLetters(w.s[1:]) && strings.ContainsRune(w.s[1:], l)) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	for _, w := range argv {
		if !w.lit || p.match(w.s) {
			return true
		}
		if p.re == nil && strings.HasPrefix(p.raw, "--") && strings.HasPrefix(w.s, p.raw+"=") {
			return true
		}
		if p.re == nil && len(p.raw) == 2 && p.raw[1] != '-' && len(w.s) > 2 && w.s[0] == '-' && w.s[1] != '-' && isLetters(w.s[1:]) && strings.IndexByte(w.s[1:], p.raw[1]) >= 0 {
			return true // -f in -rf
		}
	}
	return false
}

// optionAliases are, per program, options that mean the same as another
// (rm -R is rm -r, git -f is git --force), so that a deny rule written with
// one form catches the others.
var optionAliases = map[string]map[string]string{
	"rm":    {"-R": "-r", "--recursive": "-r", "--force": "-f", "--dir": "-d"},
	"cp":    {"-R": "-r", "--recursive": "-r", "--force": "-f"},
	"chmod": {"--recursive": "-R"},
	"chown": {"--recursive": "-R"},
	"chgrp": {"--recursive": "-R"},
	"git":   {"-f": "--force"},
}

// hasAliasedOption is hasOption with each option (a pattern's and
// argv's, short clusters taken letter by letter) replaced by its alias.
func hasAliasedOption(p wordPattern, argv []word, aliases map[string]string) bool {
	if aliases == nil || p.any || p.re != nil {
		return false
	}
	canon := func(o string) string {
		if a, ok := aliases[o]; ok {
			return a
		}
		return o
	}
	have := map[string]bool{}
	for _, w := range argv {
		switch s := w.s; {
		case !w.lit:
			return true
		case strings.HasPrefix(s, "--"):
			name, _, _ := strings.Cut(s, "=")
			have[canon(name)] = true
		case len(s) > 1 && s[0] == '-' && isLetters(s[1:]):
			for _, l := range s[1:] {
				have[canon("-"+string(l))] = true
			}
		}
	}
	var want []string
	switch raw := p.raw; {
	case strings.HasPrefix(raw, "--"):
		want = []string{canon(raw)}
	case len(raw) > 1 && isLetters(raw[1:]):
		for _, l := range raw[1:] {
			want = append(want, canon("-"+string(l)))
		}
	default:
		return false
	}
	for _, o := range want {
		if !have[o] {
			return false
		}
	}
	return true
}

func isLetters(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// flagOnlyOptions are, per program, options known to take no value, so
// that the word after them is not skipped as one (`git --no-pager log
// push` is not `git push`).
var flagOnlyOptions = map[string]map[string]bool{
	"git": {"--no-pager": true, "--paginate": true, "-p": true, "-P": true, "--bare": true,
		"--no-replace-objects": true, "--literal-pathspecs": true, "--glob-pathspecs": true,
		"--noglob-pathspecs": true, "--icase-pathspecs": true, "--no-optional-locks": true,
		"--no-lazy-fetch": true, "--no-advice": true, "--version": true, "--help": true,
		"--exec-path": true, "--html-path": true, "--man-path": true, "--info-path": true},
}

// matchPath reports whether one of the rule's globs matches a path: abs is
// absolute (or ""), rel relative to the project root ("" when outside it).
// A glob matches a path when it matches the path or one of its parent
// folders.
func (c *compiled) matchPath(abs, rel string) bool {
	for _, p := range c.paths {
		switch {
		case p.abs:
			if abs != "" && matchPrefixes(p.raw, strings.TrimPrefix(abs, "/"), true) {
				return true
			}
		case p.base:
			name := rel
			if name == "" {
				name = abs
			}
			for _, comp := range strings.Split(strings.Trim(name, "/"), "/") {
				if ok, _ := doublestar.Match(p.raw, comp); ok {
					return true
				}
			}
		default:
			if rel != "" && matchPrefixes(p.raw, rel, false) {
				return true
			}
		}
	}
	return false
}

// matchPrefixes matches glob against p and each of its parent folders.
func matchPrefixes(glob, p string, abs bool) bool {
	if abs {
		glob = strings.TrimPrefix(glob, "/")
	}
	for {
		if ok, _ := doublestar.Match(glob, p); ok {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// matchArgs reports whether every pointer of the rule finds a value that
// its glob matches.
func (c *compiled) matchArgs(v any) bool {
	for _, a := range c.args {
		x, ok := lookup(v, a.pointer)
		if !ok {
			return false
		}
		s, isStr := x.(string)
		if !isStr {
			b, err := json.Marshal(x)
			if err != nil {
				return false
			}
			s = string(b)
		}
		if !a.re.MatchString(s) {
			return false
		}
	}
	return true
}

func lookup(v any, toks []string) (any, bool) {
	for _, t := range toks {
		switch x := v.(type) {
		case map[string]any:
			n, ok := x[t]
			if !ok {
				return nil, false
			}
			v = n
		case []any:
			i := 0
			if t == "" || len(t) > 1 && t[0] == '0' {
				return nil, false
			}
			for _, c := range t {
				if c < '0' || c > '9' {
					return nil, false
				}
				i = i*10 + int(c-'0')
				if i > len(x) {
					return nil, false
				}
			}
			if i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
