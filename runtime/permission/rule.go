package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Decision is what a rule, or the policy, decides about a call.
type Decision string

// The decisions, from the weakest to the strictest.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// SandboxOff is Rule.Sandbox for commands that run outside the kernel
// sandbox.
const SandboxOff = "off"

// rank orders decisions: the strictest has the highest rank; "" (none) is 0.
func (d Decision) rank() int {
	switch d {
	case Allow:
		return 1
	case Ask:
		return 2
	case Deny:
		return 3
	}
	return 0
}

// ParseDecision checks that s is allow, ask or deny.
func ParseDecision(s string) (Decision, error) {
	switch d := Decision(s); d {
	case Allow, Ask, Deny:
		return d, nil
	}
	return "", fmt.Errorf(`must be "allow", "ask" or "deny", got %q`, s)
}

// Rule is one [[permissions.rules]] entry, as written. Its conditions are
// ANDed: a rule applies to a call when the tool matches and every condition
// it sets holds.
type Rule struct {
	// Tool is a tool name or glob (* ? [...]); alternatives are separated by
	// "|": "write|edit", "mcp_*". It matches built-in, extension and MCP
	// tools alike.
	Tool string
	// Command is an argv prefix matched against every simple command of a
	// bash call (the "command" argument of the tools Tool matches); "*"
	// matches any one word, and each word may be a glob. Nil when not set.
	Command []string
	// Path are globs on the real paths a file tool opens (doublestar: *, **,
	// ?, [...], {a,b}); a glob without "/" matches the file name in any
	// folder, one with "/" is relative to the project root, one starting
	// with "/" is absolute. Nil when not set.
	Path []string
	// Args maps JSON pointers into the call's arguments ("/url") to globs on
	// the value there (a string as it is, anything else as compact JSON).
	// Nil when not set.
	Args map[string]string
	// Decision is allow, ask or deny.
	Decision Decision
	// Reason says why, in the user's words; shown with the decision.
	Reason string
	// Sandbox is "off" for a bash rule (Command set, allow or ask) whose
	// commands run outside the kernel sandbox: a call runs unsandboxed when
	// every command in it was decided by such a rule (Result.SandboxOff).
	// "" when not set.
	Sandbox string
	// Match and NotMatch are examples checked when the rule is loaded: bash
	// commands when Command is set, else paths when Path is set, else JSON
	// arguments when Args is set, else tool names.
	Match, NotMatch []string
	// Scope is "global" or "project" (or another word for rules made in
	// code); File and Line say where the rule is written (File absolute).
	Scope string
	File  string
	Line  int
}

// Clone returns a deep copy of r.
func (r Rule) Clone() Rule {
	r.Command = slices.Clone(r.Command)
	r.Path = slices.Clone(r.Path)
	if r.Args != nil {
		a := make(map[string]string, len(r.Args))
		for k, v := range r.Args {
			a[k] = v
		}
		r.Args = a
	}
	r.Match = slices.Clone(r.Match)
	r.NotMatch = slices.Clone(r.NotMatch)
	return r
}

// Short is the rule in a few words, for messages: "bash git push",
// "write|edit .env*,**/*.pem", "fetch /url=https://*", "bash docker *
// sandbox=off".
func (r Rule) Short() string {
	parts := []string{r.Tool}
	if r.Command != nil {
		parts = append(parts, strings.Join(r.Command, " "))
	}
	if r.Path != nil {
		parts = append(parts, strings.Join(r.Path, ","))
	}
	if len(r.Args) > 0 {
		keys := make([]string, 0, len(r.Args))
		for k := range r.Args {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			parts = append(parts, k+"="+r.Args[k])
		}
	}
	if r.Sandbox != "" {
		parts = append(parts, "sandbox="+r.Sandbox)
	}
	return strings.Join(parts, " ")
}

// FieldError is one problem with a rule: Field is the key inside the rule
// ("tool", "command[1]", "match[0]"), Msg what is wrong.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Check validates r (tool and glob syntax, decision, JSON pointers) and its
// Match and NotMatch examples. It returns every problem found, nil when
// there is none.
func (r Rule) Check() []*FieldError {
	c, errs := compileRule(r)
	if len(errs) > 0 {
		return errs
	}
	exampleKind := "tool name"
	switch {
	case r.Command != nil:
		exampleKind = "command"
	case r.Path != nil:
		exampleKind = "path"
	case r.Args != nil:
		exampleKind = "JSON arguments"
	}
	check := func(field string, examples []string, want bool) {
		for i, ex := range examples {
			got, err := c.matchesExample(ex)
			key := field + "[" + strconv.Itoa(i) + "]"
			switch {
			case err != nil:
				errs = append(errs, &FieldError{key, fmt.Sprintf("example %q: %v", ex, err)})
			case got != want && want:
				errs = append(errs, &FieldError{key, fmt.Sprintf("the rule does not match the %s %q, but the example says it must", exampleKind, ex)})
			case got != want:
				errs = append(errs, &FieldError{key, fmt.Sprintf("the rule matches the %s %q, but the example says it must not", exampleKind, ex)})
			}
		}
	}
	check("match", r.Match, true)
	check("not_match", r.NotMatch, false)
	return errs
}

// compiled is a rule ready to match.
type compiled struct {
	rule    Rule
	tool    *regexp.Regexp
	command []wordPattern
	paths   []pathPattern
	args    []argPattern
	// where is "FILE:LINE" as messages show it (set by the Policy).
	where string
}

// wordPattern matches one word of an argv.
type wordPattern struct {
	raw string
	any bool           // "*"
	re  *regexp.Regexp // nil for a literal word
	// fold is re ignoring case, for a command name.
	fold *regexp.Regexp
	// option is set for a word starting with "-": it is looked for anywhere
	// among the options, as a cluster of short letters or a --long[=value].
	option bool
	slash  bool // contains "/": matched against a command's full path too
}

func (w wordPattern) match(s string) bool {
	switch {
	case w.any:
		return true
	case w.re != nil:
		return w.re.MatchString(s)
	}
	return w.raw == s
}

type pathPattern struct {
	raw string
	// base: no "/" in the pattern, matched against the file name.
	base bool
	abs  bool
}

type argPattern struct {
	pointer []string // decoded reference tokens
	raw     string
	re      *regexp.Regexp
}

func compileRule(r Rule) (*compiled, []*FieldError) {
	var errs []*FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{field, fmt.Sprintf(format, args...)})
	}
	c := &compiled{rule: r}
	if r.Tool == "" {
		add("tool", `is required: a tool name or glob ("bash", "write|edit", "*")`)
	} else if re, err := toolRegexp(r.Tool); err != nil {
		add("tool", "%v", err)
	} else {
		c.tool = re
	}
	if _, err := ParseDecision(string(r.Decision)); err != nil {
		add("decision", "%v", err)
	}
	switch {
	case r.Sandbox == "":
	case r.Sandbox != SandboxOff:
		add("sandbox", `must be %q (the commands the rule matches run outside the kernel sandbox), got %q`, SandboxOff, r.Sandbox)
	case r.Command == nil:
		add("sandbox", `needs command: it says which commands run outside the sandbox (command = ["docker", "*"])`)
	case r.Decision == Deny:
		add("sandbox", `a deny rule runs nothing: sandbox = "off" goes with allow or ask`)
	}
	if r.Command != nil {
		if len(r.Command) == 0 {
			add("command", `must name at least the command: ["git", "push"]`)
		}
		for i, w := range r.Command {
			field := "command[" + strconv.Itoa(i) + "]"
			if w == "" {
				add(field, "must not be empty")
				continue
			}
			if i == 0 && strings.HasPrefix(w, "-") {
				add(field, "%q: the first word is the command's name, not an option", w)
				continue
			}
			p := wordPattern{raw: w, any: w == "*", option: i > 0 && len(w) > 1 && w[0] == '-', slash: strings.Contains(w, "/")}
			if !p.any && hasGlob(w) {
				re, err := globRegexp(w)
				if err != nil {
					add(field, "bad glob %q: %v", w, err)
					continue
				}
				p.re = re
				if i == 0 {
					p.fold = regexp.MustCompile("(?i)" + re.String())
				}
			} else if !p.any {
				p.raw = unescapeGlob(w)
			}
			c.command = append(c.command, p)
		}
	}
	if r.Path != nil {
		if len(r.Path) == 0 {
			add("path", `must list at least one glob: [".env*"]`)
		}
		for i, g := range r.Path {
			field := "path[" + strconv.Itoa(i) + "]"
			pg, err := compilePath(g)
			if err != nil {
				add(field, "%v", err)
				continue
			}
			c.paths = append(c.paths, pg)
		}
	}
	if r.Args != nil {
		if len(r.Args) == 0 {
			add("args", `must map at least one JSON pointer to a glob: {"/url" = "https://*"}`)
		}
		keys := make([]string, 0, len(r.Args))
		for k := range r.Args {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			field := "args." + strconv.Quote(k)
			toks, err := parsePointer(k)
			if err != nil {
				add(field, "%v", err)
				continue
			}
			re, err := globRegexp(r.Args[k])
			if err != nil {
				add(field, "bad glob %q: %v", r.Args[k], err)
				continue
			}
			c.args = append(c.args, argPattern{pointer: toks, raw: r.Args[k], re: re})
		}
	}
	return c, errs
}

// matchesExample reports whether the rule's main condition matches one of
// its examples (see Rule.Match).
func (c *compiled) matchesExample(ex string) (bool, error) {
	switch {
	case c.command != nil:
		for _, cmd := range analyze(ex) {
			if c.matchCommand(&cmd) {
				return true, nil
			}
		}
		return false, nil
	case c.paths != nil:
		if ex == "" {
			return false, errors.New("an empty path")
		}
		p := filepath.FromSlash(ex)
		if filepath.IsAbs(p) {
			return c.matchPath(filepath.ToSlash(filepath.Clean(p)), ""), nil
		}
		return c.matchPath("", filepath.ToSlash(filepath.Clean(p))), nil
	case c.args != nil:
		var v any
		if err := json.Unmarshal([]byte(ex), &v); err != nil {
			return false, fmt.Errorf("not JSON arguments: %v", err)
		}
		return c.matchArgs(v), nil
	}
	return c.tool.MatchString(ex), nil
}

// toolRegexp compiles "a|b*|c?" into one anchored expression.
func toolRegexp(s string) (*regexp.Regexp, error) {
	var alts []string
	for _, alt := range strings.Split(s, "|") {
		alt = strings.TrimSpace(alt)
		if alt == "" {
			return nil, fmt.Errorf("%q has an empty alternative", s)
		}
		if strings.ContainsAny(alt, " \t/") {
			return nil, fmt.Errorf("%q is not a tool name or glob", alt)
		}
		re, err := globBody(alt)
		if err != nil {
			return nil, fmt.Errorf("bad glob %q: %v", alt, err)
		}
		alts = append(alts, re)
	}
	return regexp.Compile("^(?:" + strings.Join(alts, "|") + ")$")
}

func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[\\") }

// unescapeGlob drops the backslashes of a pattern without glob characters
// ("\*" is a literal star).
func unescapeGlob(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// globRegexp compiles a glob where * matches any run of characters (slashes
// included), ? one character, [...] a class and \ escapes the next one.
func globRegexp(g string) (*regexp.Regexp, error) {
	body, err := globBody(g)
	if err != nil {
		return nil, err
	}
	return regexp.Compile("^(?s:" + body + ")$")
}

func globBody(g string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '\\':
			if i+1 >= len(g) {
				return "", errors.New("ends with a lone backslash")
			}
			i++
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		case '[':
			j := i + 1
			if j < len(g) && (g[j] == '!' || g[j] == '^') {
				j++
			}
			if j < len(g) && g[j] == ']' {
				j++
			}
			for j < len(g) && g[j] != ']' {
				j++
			}
			if j >= len(g) {
				return "", errors.New("unclosed [")
			}
			class := g[i+1 : j]
			neg := false
			if strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^") {
				neg, class = true, class[1:]
			}
			b.WriteByte('[')
			if neg {
				b.WriteByte('^')
			}
			for _, r := range class {
				if r == '\\' || r == '[' || r == ']' || r == '^' {
					b.WriteByte('\\')
				}
				b.WriteRune(r)
			}
			b.WriteByte(']')
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		}
	}
	if _, err := regexp.Compile(b.String()); err != nil {
		return "", err
	}
	return b.String(), nil
}

func compilePath(g string) (pathPattern, error) {
	if g == "" {
		return pathPattern{}, errors.New("must not be empty")
	}
	if strings.HasPrefix(g, "~") {
		return pathPattern{}, fmt.Errorf("%q: ~ is not expanded; write the glob relative to the project root or absolute", g)
	}
	if !doublestar.ValidatePattern(g) {
		return pathPattern{}, fmt.Errorf("bad glob %q", g)
	}
	trimmed := strings.TrimSuffix(g, "/")
	return pathPattern{raw: trimmed, base: !strings.Contains(trimmed, "/"), abs: strings.HasPrefix(g, "/")}, nil
}

// parsePointer decodes an RFC 6901 JSON pointer.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return []string{}, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("%q is not a JSON pointer (it starts with \"/\": \"/url\", \"/options/0\")", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}
