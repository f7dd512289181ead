package skills

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
)

// Template is one prompt template: a Markdown file whose body becomes the
// prompt of `/NAME args`.
type Template struct {
	// Name is the file's name without ".md".
	Name string
	// Description is the front matter's, else the body's first non-blank
	// line (cut at 60 characters, "..." added), as the reference does.
	Description  string
	ArgumentHint string
	// Content is the body: after front matter trimmed, else the whole
	// text (line ends normalized).
	Content string
	// FilePath is the file; Source "project" or "user"; Base as Skill's.
	FilePath, Source, Base string
}

// SourceInfo is the template's origin as the reference reports it.
func (t Template) SourceInfo() SourceInfo { return sourceInfo(t.FilePath, t.Source, t.Base) }

// LoadTemplate reads one template file.
func LoadTemplate(path string, d Dir) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fm, body, err := ParseFrontMatter(string(data))
	if err != nil {
		return nil, err
	}
	t := &Template{Name: strings.TrimSuffix(filepath.Base(path), ".md"), Content: body, FilePath: path, Source: d.Source, Base: d.Base}
	t.Description, _ = stringField(fm, "description")
	t.ArgumentHint, _ = stringField(fm, "argument-hint")
	if t.Description == "" {
		for _, line := range strings.Split(body, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			u := utf16.Encode([]rune(line))
			if len(u) > 60 {
				t.Description = string(utf16.Decode(u[:60])) + "..."
			} else {
				t.Description = line
			}
			break
		}
	}
	return t, nil
}

// LoadTemplates reads the .md files directly in each folder (names
// starting with "." left out; symbolic links followed), in name order; the
// first template of a name wins, a later one is reported "shadowed"; a file
// whose front matter does not parse is reported "skipped".
func LoadTemplates(dirs []Dir) ([]Template, []Diagnostic) {
	var out []Template
	var diags []Diagnostic
	byName := map[string]string{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d.Path)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || name == "node_modules" || !strings.HasSuffix(name, ".md") {
				continue
			}
			full := filepath.Join(d.Path, name)
			if st, err := os.Stat(full); err != nil || !st.Mode().IsRegular() {
				continue
			}
			t, err := LoadTemplate(full, d)
			if err != nil {
				dg := Diagnostic{Kind: "skipped", Path: full, Message: err.Error()}
				var fe *FrontMatterError
				if errors.As(err, &fe) {
					dg.Line = fe.Line
				}
				diags = append(diags, dg)
				continue
			}
			if w, ok := byName[t.Name]; ok {
				diags = append(diags, Diagnostic{Kind: "shadowed", Path: full, Winner: w,
					Message: fmt.Sprintf("name \"/%s\" collision: %s was found first", t.Name, w)})
				continue
			}
			byName[t.Name] = full
			out = append(out, *t)
		}
	}
	return out, diags
}

// SplitArgs splits a template's argument text as the reference does: on
// spaces and tabs, with '...' and "..." grouping (the quotes dropped; an
// unclosed quote runs to the end); empty arguments are not kept.
func SplitArgs(s string) []string {
	var args []string
	var cur strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == ' ' || ch == '\t':
			if cur.Len() > 0 {
				args = append(args, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteByte(ch)
		}
	}
	if cur.Len() > 0 {
		args = append(args, cur.String())
	}
	return args
}

var (
	positional = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$(\d+)`) })
	sliced     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{@:(\d+)(?::(\d+))?\}`) })
)

// jsIndex is a run of ASCII digits as JavaScript's parseInt reads it,
// capped: any value past the argument count selects nothing.
func jsIndex(digits string) int {
	f, _ := strconv.ParseFloat(digits, 64)
	if f > 1<<40 {
		return 1 << 40
	}
	return int(f)
}

// Substitute fills a template's placeholders as the reference does, pass
// after pass on the text so far: $N (the Nth argument, "" when missing);
// ${@:N} and ${@:N:L} (arguments from the Nth, L of them, joined by
// spaces; N 0 counts as 1); then $ARGUMENTS and then $@ (all, joined),
// whose replacement text is read as JavaScript reads a replacement string
// ("$$", "$&", "$`" and "$'" are special in it).
func Substitute(content string, args []string) string {
	out := positional().ReplaceAllStringFunc(content, func(m string) string {
		i := jsIndex(m[1:]) - 1
		if i < 0 || i >= len(args) {
			return ""
		}
		return args[i]
	})
	out = sliced().ReplaceAllStringFunc(out, func(m string) string {
		sub := sliced().FindStringSubmatch(m)
		start := max(jsIndex(sub[1])-1, 0)
		end := len(args)
		if sub[2] != "" {
			end = min(start+jsIndex(sub[2]), len(args))
		}
		if start >= len(args) || end <= start {
			return ""
		}
		return strings.Join(args[start:end], " ")
	})
	all := strings.Join(args, " ")
	out = jsReplaceAll(out, "$ARGUMENTS", all)
	return jsReplaceAll(out, "$@", all)
}

// jsReplaceAll is JavaScript's s.replace(/literal/g, repl) for a pattern
// without groups: the replacement's "$$" is "$", "$&" the match, "$`" the
// text before it and "$'" the text after it; any other "$" stays.
func jsReplaceAll(s, literal, repl string) string {
	if !strings.Contains(s, literal) {
		return s
	}
	var b strings.Builder
	pos := 0
	for {
		i := strings.Index(s[pos:], literal)
		if i < 0 {
			break
		}
		at := pos + i
		b.WriteString(s[pos:at])
		for j := 0; j < len(repl); j++ {
			if repl[j] != '$' || j+1 >= len(repl) {
				b.WriteByte(repl[j])
				continue
			}
			switch repl[j+1] {
			case '$':
				b.WriteByte('$')
			case '&':
				b.WriteString(literal)
			case '`':
				b.WriteString(s[:at])
			case '\'':
				b.WriteString(s[at+len(literal):])
			default:
				b.WriteByte('$')
				continue
			}
			j++
		}
		pos = at + len(literal)
	}
	b.WriteString(s[pos:])
	return b.String()
}

// FindTemplate returns the template of that name.
func FindTemplate(ts []Template, name string) (Template, bool) {
	for _, t := range ts {
		if t.Name == name {
			return t, true
		}
	}
	return Template{}, false
}

// ExpandTemplate expands "/NAME args" when NAME is a template: the text up
// to the first space names it, the rest (SplitArgs) fills it. ok is false
// otherwise (the text is returned as it is).
func ExpandTemplate(text string, ts []Template) (string, bool) {
	rest, found := strings.CutPrefix(text, "/")
	if !found {
		return text, false
	}
	name, args, _ := strings.Cut(rest, " ")
	t, found := FindTemplate(ts, name)
	if !found {
		return text, false
	}
	return Substitute(t.Content, SplitArgs(args)), true
}
