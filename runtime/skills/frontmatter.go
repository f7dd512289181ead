// Package skills finds Agent Skills and prompt templates where the
// reference agent finds them, reads them as it does (YAML front matter,
// the same lenient checks), writes the skills' block of the system prompt
// in its words and expands `/skill:NAME args` and `/TEMPLATE args` as its
// code does. See docs/skills.md and docs/prompts.md.
package skills

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/pi-go/pi/internal/frontmatter"
	yaml "go.yaml.in/yaml/v3"
)

// FrontMatterError is front matter that does not parse; Line is the line
// of the file (1-based) the YAML parser names, 0 when it names none.
type FrontMatterError struct {
	Line int
	Err  error
}

func (e *FrontMatterError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("front matter line %d: %v", e.Line, e.Err)
	}
	return "front matter: " + e.Err.Error()
}

func (e *FrontMatterError) Unwrap() error { return e.Err }

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): `) })

// ParseFrontMatter splits a Markdown file into its front matter and body
// by the reference's rule: line ends normalized to \n; the text must start
// with "---" and the front matter ends at the next "\n---"; the body is
// what follows, trimmed. Without front matter the body is the whole
// (normalized, untrimmed) text and the map is empty. Front matter that is
// not a YAML mapping counts as empty.
func ParseFrontMatter(content string) (map[string]any, string, error) {
	split, _ := frontmatter.Split("", []byte(content)) // it fails on nothing
	src, body := split.YAML, split.Body
	if src == "" {
		return map[string]any{}, body, nil
	}
	// The reference's parser ends a block scalar at the end of the text
	// with its line break (clip chomping); go-yaml only with a line break
	// there, so one is added.
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src+"\n"), &doc); err != nil {
		return nil, body, yamlError(err)
	}
	v, err := nodeValue(&doc, 0)
	if err != nil {
		return nil, body, yamlError(err)
	}
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, body, nil
}

// nodeValue is a YAML node as the reference's parser (the yaml package,
// YAML 1.2 core schema) gives it: as go-yaml decodes it, except that a
// date stays a string (the core schema has no timestamps).
func nodeValue(n *yaml.Node, depth int) (any, error) {
	if depth > 100 {
		return nil, errors.New("front matter nested too deeply")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return nodeValue(n.Content[0], depth+1)
	case yaml.AliasNode:
		return nodeValue(n.Alias, depth+1)
	case yaml.MappingNode:
		m := map[string]any{}
		at := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := nodeValue(n.Content[i], depth+1)
			if err != nil {
				return nil, err
			}
			key := fmt.Sprint(k)
			if first, dup := at[key]; dup {
				// The reference's parser refuses it too.
				return nil, fmt.Errorf("yaml: line %d: mapping key %q already defined at line %d", n.Content[i].Line, key, first)
			}
			at[key] = n.Content[i].Line
			v, err := nodeValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
		return m, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := nodeValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	if n.ShortTag() == "!!timestamp" {
		return n.Value, nil
	}
	var v any
	err := n.Decode(&v)
	return v, err
}

// yamlError turns the parser's "yaml: line N: ..." into a line of the file
// (the front matter starts on the file's second line).
func yamlError(err error) error {
	msg := err.Error()
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &FrontMatterError{Line: n + 1, Err: errors.New(strings.TrimPrefix(msg, m[0]))}
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return &FrontMatterError{Err: errors.New(strings.Join(te.Errors, "; "))}
	}
	return &FrontMatterError{Err: errors.New(strings.TrimPrefix(msg, "yaml: "))}
}

// stringField is m[key] when it is a string ("" when absent); ok is false
// for a value of another type.
func stringField(m map[string]any, key string) (string, bool) {
	v, present := m[key]
	if !present || v == nil {
		return "", true
	}
	s, ok := v.(string)
	return s, ok
}
