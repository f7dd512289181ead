//go:build wasip1

// Command protect-paths is a pi extension with a tool_call hook that blocks
// write and edit calls on protected paths (default .env, .env.* and
// .git/**) and bash commands matching configured regular expressions. It
// needs no grants.
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
}

type rule struct {
	source  string
	re      *regexp.Regexp
	bySlash bool
}

var (
	pathRules []rule
	bashRules []rule
)

func init() {
	sdk.Extension("protect-paths", "0.1.0", "Blocks writes to protected paths and bash commands matching protected patterns")
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
	switch c.ToolName {
	case "write", "edit":
		var in struct {
			Path string `json:"path"`
		}
		if err := c.DecodeInput(&in); err != nil || in.Path == "" {
			return sdk.ToolCallDecision{}
		}
		if r, ok := matchPath(in.Path); ok {
			return sdk.Deny(fmt.Sprintf("Blocked by protect-paths: %s of %s is not allowed because it matches the protected path rule \"%s\". Ask the user to change this file.", c.ToolName, in.Path, r))
		}
	case "bash":
		var in struct {
			Command string `json:"command"`
		}
		if err := c.DecodeInput(&in); err != nil {
			return sdk.ToolCallDecision{}
		}
		for _, r := range bashRules {
			if r.re.MatchString(in.Command) {
				return sdk.Deny(fmt.Sprintf("Blocked by protect-paths: the command matches the protected bash rule \"%s\". Ask the user to run it.", r.source))
			}
		}
	}
	return sdk.ToolCallDecision{}
}

// matchPath reports the first rule that protects p.
func matchPath(p string) (string, bool) {
	p = strings.TrimPrefix(p, "@")
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(sdk.Cwd(), p)
	}
	abs = filepath.ToSlash(filepath.Clean(abs))
	rel := abs
	if r, err := filepath.Rel(sdk.Cwd(), abs); err == nil && !strings.HasPrefix(r, "..") {
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
