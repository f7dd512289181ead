// Package frontmatter reads the YAML front matter of a Markdown file (the
// block between a first line "---" and the next line "---"), the format of
// Agent Skills, prompt templates and agent definitions. It is a leaf:
// errors name the file and the line in that file (not in the YAML block),
// so a person can go straight to the mistake.
//
// The YAML library is go.yaml.in/yaml/v3, the YAML organisation's
// maintained continuation of gopkg.in/yaml.v3 (archived in 2025) with the
// same API; v4 is not released yet.
package frontmatter

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Error is a problem of a file's front matter, at a line of the file.
type Error struct {
	File string
	Line int // 1-based line of the file; 0 when unknown
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Document is a Markdown file split at its front matter.
type Document struct {
	// File names the file in errors.
	File string
	// YAML is the front matter's text ("" when the file has none).
	YAML string
	// Body is what follows the closing "---", trimmed of surrounding white
	// space; the whole text when there is no front matter.
	Body string
	// HasFrontMatter says the file starts with a front-matter block.
	HasFrontMatter bool
	// yamlLine is the file line of the YAML text's first line.
	yamlLine int
}

// Split separates data's front matter from its body by the reference
// agent's rule (its parseFrontmatter, which its skills, prompt templates
// and agent files share): line ends are normalised to "\n"; the text must
// start with "---", and the front matter ends at the next "\n---"; the
// body is what follows, trimmed. Without front matter (no "---" at the
// start, or no closing line) the body is the whole normalised text, as it
// is.
func Split(file string, data []byte) (Document, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	d := Document{File: file, Body: text}
	if !strings.HasPrefix(text, "---") {
		return d, nil
	}
	end := strings.Index(text[3:], "\n---")
	if end < 0 {
		return d, nil
	}
	end += 3
	if end >= 4 {
		d.YAML = text[4:end]
	}
	d.Body = strings.TrimSpace(text[end+4:])
	d.HasFrontMatter, d.yamlLine = true, 2
	return d, nil
}

// Decode decodes the front matter into out (as yaml.Unmarshal); an empty
// front matter leaves out as it is. A document that is not a mapping is an
// error.
func (d Document) Decode(out any) error {
	if strings.TrimSpace(d.YAML) == "" {
		return nil
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(d.YAML), &n); err != nil {
		return d.wrap(err)
	}
	if len(n.Content) == 0 {
		return nil
	}
	root := n.Content[0]
	if root.Kind != yaml.MappingNode {
		return &Error{File: d.File, Line: d.yamlLine + root.Line - 1, Msg: "front matter must be a mapping of keys to values"}
	}
	if err := root.Decode(out); err != nil {
		return d.wrap(err)
	}
	return nil
}

// Parse is Split, then Decode into out.
func Parse(file string, data []byte, out any) (Document, error) {
	d, err := Split(file, data)
	if err != nil {
		return d, err
	}
	return d, d.Decode(out)
}

// Line is the file line of a node of the front matter (decoded into a
// yaml.Node field).
func (d Document) Line(n *yaml.Node) int {
	if n == nil || n.Line == 0 {
		return 0
	}
	return d.yamlLine + n.Line - 1
}

// Node is a YAML node, for fields whose shape varies (a string or a list).
type Node = yaml.Node

// yamlLineRE finds the YAML library's "line N" in its messages.
var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

// wrap turns a YAML error into an Error at the file's line: the first line
// the message names (every one, for a list of type errors, is moved to the
// file's numbering).
func (d Document) wrap(err error) error {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	first := 0
	for i, m := range msgs {
		m = strings.TrimPrefix(m, "yaml: ")
		m = yamlLineRE().ReplaceAllStringFunc(m, func(s string) string {
			n, _ := strconv.Atoi(s[len("line "):])
			n += d.yamlLine - 1
			if first == 0 {
				first = n
			}
			return "line " + strconv.Itoa(n)
		})
		// The line is in the Error's place: drop "line N: " in front.
		if first > 0 && strings.HasPrefix(m, "line "+strconv.Itoa(first)+": ") {
			m = strings.TrimPrefix(m, "line "+strconv.Itoa(first)+": ")
		}
		msgs[i] = m
	}
	return &Error{File: d.File, Line: first, Msg: strings.Join(msgs, "; ")}
}

// The kinds of a Node.
const (
	ScalarNode   = yaml.ScalarNode
	SequenceNode = yaml.SequenceNode
	MappingNode  = yaml.MappingNode
)
