//go:build wasip1

// Command protect-paths is a pi extension with a tool_call hook that blocks
// calls of the built-in path tools (read, write, edit, ls, find, grep) and of
// any tool that reports the paths it opens, when the path given or the real
// path the tool will open is protected (default .env, .env.* and .git/**),
// and bash commands matching configured regular expressions. It needs no
// grants. With mode = "ask" it asks the person instead of blocking.
package main

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pi-go/pi/sdk"
)

// config is the [extensions.config] table.
type config struct {
	// Paths are globs: `*` and `?` stay inside one path segment, `**` spans
	// segments. A glob without a slash matches a file name at any depth;
	// one with a slash matches the path relative to the working directory
	// (or the absolute path, when the glob starts with "/").
	Paths []string `json:"paths"`
	// Bash are regular expressions (RE2) searched in bash commands.
	Bash []string `json:"bash"`
	// GuardReads checks read, ls, find and grep too (default true); false
	// checks only the tools that change files.
	GuardReads *bool `json:"guard_reads"`
	// Mode is "block" (the default): a protected call is blocked; or "ask"
	// (ABI 1.1): the person is asked, and without one (pi -p without
	// --yes) the call is blocked with "needs approval".
	Mode string `json:"mode"`
}

type rule struct {
	source  string
	re      *regexp.Regexp
	bySlash bool
}

var (
	pathRules  []rule
	bashRules  []rule
	guardReads bool
	askMode    bool
)

// pathArgTools are the built-in tools whose "path" argument names what they
// open; readTools are those of them that only read; searchTools walk the
// whole tree below their path.
var (
	pathArgTools = map[string]bool{"read": true, "write": true, "edit": true, "ls": true, "find": true, "grep": true}
	readTools    = map[string]bool{"read": true, "ls": true, "find": true, "grep": true}
	searchTools  = map[string]bool{"find": true, "grep": true}
)

func init() {
	sdk.Extension("protect-paths", "0.2.0", "Blocks tool calls on protected paths and bash commands matching protected patterns")
	sdk.OnInit(load)
	sdk.OnToolCall(check)
}

func main() {}

func load() error {
	cfg := config{Paths: []string{".env", ".env.*", ".git/**"}}
	if err := sdk.Config(&cfg); err != nil {
		return err
	}
	pathRules, bashRules = nil, nil
	guardReads = cfg.GuardReads == nil || *cfg.GuardReads
	switch cfg.Mode {
	case "", "block":
		askMode = false
	case "ask":
		if sdk.ABIMinor() < 1 {
			return fmt.Errorf("config mode = \"ask\" needs a pi that speaks extension ABI 1.1 (this one speaks 1.%d)", sdk.ABIMinor())
		}
		askMode = true
	default:
		return fmt.Errorf("config mode %q must be \"block\" or \"ask\"", cfg.Mode)
	}
	for i, g := range cfg.Paths {
		re, err := globRegexp(g)
		if err != nil {
			return fmt.Errorf("config paths[%d] %q: %w", i, g, err)
		}
		pathRules = append(pathRules, rule{source: g, re: re, bySlash: strings.Contains(g, "/")})
	}
	for i, p := range cfg.Bash {
		re, err := regexp.Compile(p)
		if err != nil {
			return fmt.Errorf("config bash[%d] %q: %w", i, p, err)
		}
		bashRules = append(bashRules, rule{source: p, re: re})
	}
	return nil
}

func check(c sdk.ToolCall) sdk.ToolCallDecision {
	if c.ToolName == "bash" {
		var in struct {
			Command string `json:"command"`
		}
		if err := c.DecodeInput(&in); err != nil {
			return sdk.ToolCallDecision{}
		}
		for _, r := range bashRules {
			if r.re.MatchString(in.Command) {
				return decide(fmt.Sprintf("Blocked by protect-paths: the command matches the protected bash rule \"%s\". Ask the user to run it.", r.source),
					fmt.Sprintf("the bash command matches the protected rule \"%s\"", r.source))
			}
		}
	}
	if readTools[c.ToolName] && !guardReads {
		return sdk.ToolCallDecision{}
	}
	if pathArgTools[c.ToolName] {
		var in struct {
			Path string `json:"path"`
		}
		if err := c.DecodeInput(&in); err == nil && in.Path != "" {
			if r, ok := matchPath(argPath(in.Path)); ok {
				return decide(fmt.Sprintf("Blocked by protect-paths: %s of %s is not allowed because it matches the protected path rule \"%s\". Ask the user to change this file.", c.ToolName, in.Path, r),
					fmt.Sprintf("%s of %s matches the protected path rule \"%s\"", c.ToolName, in.Path, r))
			}
		}
	}
	// The real paths the host resolved: "~/", "a/../b" and symlinks show
	// where the call really goes.
	for _, p := range c.Paths {
		if r, ok := matchPath(p); ok {
			return decide(fmt.Sprintf("Blocked by protect-paths: %s of %s is not allowed because it matches the protected path rule \"%s\". Ask the user to change this file.", c.ToolName, p, r),
				fmt.Sprintf("%s of %s matches the protected path rule \"%s\"", c.ToolName, p, r))
		}
		if searchTools[c.ToolName] {
			if r, ok := searchReaches(p); ok {
				return decide(fmt.Sprintf("Blocked by protect-paths: %s below %s is not allowed because it would look inside the protected path rule \"%s\". Search a folder that does not contain it.", c.ToolName, p, r),
					fmt.Sprintf("%s below %s would look inside the protected path rule \"%s\"", c.ToolName, p, r))
			}
		}
	}
	return sdk.ToolCallDecision{}
}

// decide blocks a protected call with reason, or in ask mode asks the
// person question first.
func decide(reason, question string) sdk.ToolCallDecision {
	if askMode {
		return sdk.Ask("protect-paths: " + question + "; allow it?")
	}
	return sdk.Deny(reason)
}

// argPath makes a path argument absolute and clean the simple way (a
// leading "@" dropped, joined to the working directory); the host's paths
// cover what this misses ("~", symlinks, Unicode fallbacks).
func argPath(p string) string {
	p = strings.TrimPrefix(p, "@")
	if !filepath.IsAbs(p) {
		p = filepath.Join(sdk.Cwd(), p)
	}
	return filepath.Clean(p)
}

// matchPath reports the first rule that protects the absolute path abs.
func matchPath(abs string) (string, bool) {
	abs = filepath.ToSlash(abs)
	rel := abs
	if r, err := filepath.Rel(sdk.Cwd(), abs); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
		rel = filepath.ToSlash(r)
	}
	for _, r := range pathRules {
		switch {
		case strings.HasPrefix(r.source, "/"):
			if r.re.MatchString(abs) {
				return r.source, true
			}
		case r.bySlash:
			if r.re.MatchString(rel) {
				return r.source, true
			}
		default:
			if r.re.MatchString(path.Base(rel)) {
				return r.source, true
			}
		}
	}
	return "", false
}

// searchReaches reports the first absolute rule whose fixed leading folder
// lies below dir, which a find or grep of dir would walk into (a search of
// the home folder reaches a protected "/home/me/.ssh/**"). Relative rules
// are not applied this way, or the project could not be searched at all;
// find and grep skip .git and what .gitignore lists.
func searchReaches(dir string) (string, bool) {
	dir = filepath.ToSlash(dir)
	for _, r := range pathRules {
		if !strings.HasPrefix(r.source, "/") {
			continue
		}
		var fixed []string
		for _, seg := range strings.Split(r.source, "/")[1:] {
			if strings.ContainsAny(seg, "*?[") {
				break
			}
			fixed = append(fixed, seg)
		}
		prefix := "/" + strings.Join(fixed, "/")
		if dir == "/" || prefix == dir || strings.HasPrefix(prefix, dir+"/") {
			return r.source, true
		}
	}
	return "", false
}

// globRegexp compiles a glob: `**` matches across slashes (and `dir/**`
// matches dir itself), `*` and `?` do not, `[...]` is a class.
func globRegexp(g string) (*regexp.Regexp, error) {
	if g == "" {
		return nil, fmt.Errorf("empty glob")
	}
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			if i+1 < len(g) && g[i+1] == '*' {
				i++
				if i+1 < len(g) && g[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '[':
			j := strings.IndexByte(g[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("unclosed [ in glob")
			}
			class := g[i+1 : i+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	s := b.String()
	// "dir/**" also protects "dir" itself.
	if strings.HasSuffix(g, "/**") {
		s = strings.TrimSuffix(s, "/.*") + "(?:/.*)?"
	}
	return regexp.Compile(s + "$")
}
