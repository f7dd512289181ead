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

// defaults are the built-in secret shapes.
var defaults = []string{
	`sk-[A-Za-z0-9_-]{16,}`,         // OpenAI and similar API keys
	`gh[pousr]_[A-Za-z0-9]{20,}`,    // GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_)
	`github_pat_[A-Za-z0-9_]{20,}`,  // GitHub fine-grained tokens
	`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`, // AWS access key ids
	`xox[abprs]-[A-Za-z0-9-]{10,}`,  // Slack tokens
}

var patterns []*regexp.Regexp

func init() {
	sdk.Extension("redact", "0.1.0", "Masks secrets in tool results before the model sees them")
	sdk.OnInit(func() error {
		var cfg config
		if err := sdk.Config(&cfg); err != nil {
			return err
		}
		patterns = nil
		src := cfg.Patterns
		if !cfg.NoDefaults {
			src = append(append([]string(nil), defaults...), cfg.Patterns...)
		}
		for i, p := range src {
			re, err := regexp.Compile(p)
			if err != nil {
				return fmt.Errorf("config patterns: %q: %w", p, err)
			}
			if re.MatchString("") {
				return fmt.Errorf("config patterns: %q (#%d) matches the empty string", p, i)
			}
			patterns = append(patterns, re)
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
	for _, re := range patterns {
		s = re.ReplaceAllStringFunc(s, func(string) string { n++; return mask })
	}
	return s, n
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
