//go:build wasip1

// Command redact is a pi extension with a tool_result hook that masks
// secrets (OpenAI-style sk-... keys, GitHub tokens, AWS access key ids, and
// regular expressions from its configuration) as [REDACTED] in every tool
// result before the model sees it. It needs no grants.
package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/pi-go/pi/sdk"
)

// config is the [extensions.config] table.
type config struct {
	// Patterns are extra regular expressions (RE2); each match is masked.
	Patterns []string `json:"patterns"`
	// NoDefaults turns off the built-in patterns.
	NoDefaults bool `json:"no_defaults"`
}

const mask = "[REDACTED]"

// secretShape is a built-in pattern with the literals one of which starts
// every match. Regular expressions in wasm scan a few hundred KB/s at best,
// so a built-in pattern runs only where its literal occurs, anchored there
// and on a short window, and a result without any of the literals costs only
// substring searches.
type secretShape struct {
	anchored *regexp.Regexp // matches at the start of the window only
	literals []string
	// wordStart: the character before the match must not be a word
	// character (a leading \b, checked by hand because the window hides it).
	wordStart bool
}

var defaults = []secretShape{
	{regexp.MustCompile(`\Ask-[A-Za-z0-9_-]{16,}`), []string{"sk-"}, false},                                              // OpenAI and similar API keys
	{regexp.MustCompile(`\Agh[pousr]_[A-Za-z0-9]{20,}`), []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, false},        // GitHub tokens
	{regexp.MustCompile(`\Agithub_pat_[A-Za-z0-9_]{20,}`), []string{"github_pat_"}, false},                               // GitHub fine-grained tokens
	{regexp.MustCompile(`\A(?:AKIA|ASIA)[0-9A-Z]{16}\b`), []string{"AKIA", "ASIA"}, true},                                // AWS access key ids
	{regexp.MustCompile(`\Axox[abprs]-[A-Za-z0-9-]{10,}`), []string{"xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"}, false}, // Slack tokens
}

// window bounds how far a built-in match may reach from its literal.
const window = 4096

// custom holds the configured patterns with their literal prefix, if any.
type customPattern struct {
	re     *regexp.Regexp
	prefix string
}

var (
	useDefaults bool
	custom      []customPattern
)

func init() {
	sdk.Extension("redact", "0.1.0", "Masks secrets in tool results before the model sees them")
	sdk.OnInit(func() error {
		var cfg config
		if err := sdk.Config(&cfg); err != nil {
			return err
		}
		useDefaults, custom = !cfg.NoDefaults, nil
		for i, p := range cfg.Patterns {
			re, err := regexp.Compile(p)
			if err != nil {
				return fmt.Errorf("config patterns: %q: %w", p, err)
			}
			if re.MatchString("") {
				return fmt.Errorf("config patterns: %q (#%d) matches the empty string", p, i)
			}
			prefix, _ := re.LiteralPrefix()
			custom = append(custom, customPattern{re: re, prefix: prefix})
		}
		return nil
	})
	sdk.OnToolResult(redact)
}

func main() {}

func redact(r sdk.ToolResult) sdk.ResultPatch {
	var patch sdk.ResultPatch
	n := 0
	content := make([]sdk.Block, len(r.Content))
	for i, b := range r.Content {
		if b.Type == "text" {
			var k int
			b.Text, k = maskString(b.Text)
			n += k
		}
		content[i] = b
	}
	if n > 0 {
		patch.Content = content
	}
	if len(r.Details) > 0 && string(r.Details) != "null" {
		var d any
		if json.Unmarshal(r.Details, &d) == nil {
			if d2, k := maskValue(d); k > 0 {
				patch.Details = d2
				n += k
			}
		}
	}
	if n > 0 {
		sdk.Logf(sdk.LevelInfo, "masked %d secret(s) in the result of %s (%s)", n, r.ToolName, r.ToolCallID)
	}
	return patch
}

func maskString(s string) (string, int) {
	n := 0
	if useDefaults {
		for _, d := range defaults {
			var k int
			s, k = maskShape(s, d)
			n += k
		}
	}
	for _, c := range custom {
		if c.prefix != "" && !strings.Contains(s, c.prefix) {
			continue
		}
		s = c.re.ReplaceAllStringFunc(s, func(string) string { n++; return mask })
	}
	return s, n
}

// maskShape masks the matches of one built-in shape, trying the anchored
// pattern at each occurrence of one of its literals.
func maskShape(s string, d secretShape) (string, int) {
	var b strings.Builder
	next := make([]int, len(d.literals)) // next occurrence of each literal; -1 none left
	for k, l := range d.literals {
		next[k] = strings.Index(s, l)
	}
	n, last, i := 0, 0, 0
	for {
		start := -1
		for k, l := range d.literals {
			if next[k] >= 0 && next[k] < i {
				if j := strings.Index(s[i:], l); j >= 0 {
					next[k] = i + j
				} else {
					next[k] = -1
				}
			}
			if next[k] >= 0 && (start < 0 || next[k] < start) {
				start = next[k]
			}
		}
		if start < 0 {
			break
		}
		i = start + 1
		if d.wordStart && start > 0 && isWordByte(s[start-1]) {
			continue
		}
		loc := d.anchored.FindStringIndex(s[start:min(start+window, len(s))])
		if loc == nil {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(mask)
		last = start + loc[1]
		i = last
		n++
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// maskValue masks every string inside decoded JSON.
func maskValue(v any) (any, int) {
	switch v := v.(type) {
	case string:
		return maskString(v)
	case []any:
		n := 0
		for i := range v {
			var k int
			v[i], k = maskValue(v[i])
			n += k
		}
		return v, n
	case map[string]any:
		n := 0
		for key := range v {
			var k int
			v[key], k = maskValue(v[key])
			n += k
		}
		return v, n
	}
	return v, 0
}
