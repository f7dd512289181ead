package permission

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// word is one word of a command's argv as the policy sees it: its value when
// the script spells it out (quotes and escapes removed), or a dynamic word
// (a variable, a substitution, a glob) whose value is only known when it
// runs.
type word struct {
	s   string
	lit bool
	// split: dynamic and unquoted, so it may become any number of words
	// (field splitting, pathname expansion); a quoted dynamic word is one.
	split bool
}

func litWord(s string) word { return word{s: s, lit: true} }

// display is the word for messages: its value, or "…" for a dynamic one.
func (w word) display() string {
	if !w.lit {
		if w.s != "" {
			return w.s
		}
		return "…"
	}
	return w.s
}

// evalWord turns a parsed word into a word; src is the script, for showing
// a dynamic word as written.
func evalWord(w *syntax.Word, src string) word {
	var b strings.Builder
	lit, split := true, false
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v, glob := unquotedLit(p.Value)
			b.WriteString(v)
			if glob {
				lit, split = false, true
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(dquotedLit(l.Value))
				} else {
					lit = false
				}
			}
		case *syntax.ProcSubst:
			lit = false // one word: /dev/fd/N
		default: // ParamExp, CmdSubst, ArithmExp, ExtGlob, BraceExp
			lit, split = false, true
		}
	}
	if lit {
		return litWord(b.String())
	}
	return word{s: source(w, src), split: split}
}

// source is the text of node n in src, bounded for messages.
func source(n syntax.Node, src string) string {
	start, end := n.Pos(), n.End()
	if !start.IsValid() || !end.IsValid() {
		return ""
	}
	s, e := int(start.Offset()), int(end.Offset())
	if s < 0 || e > len(src) || s >= e {
		return ""
	}
	return clip(src[s:e], 80)
}

// clip shortens s to at most n bytes (on a rune boundary) with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// unquotedLit removes the backslashes of an unquoted literal (a backslash
// and newline is a line continuation and disappears) and reports whether it
// has unescaped glob characters, which pathname expansion may replace.
func unquotedLit(v string) (string, bool) {
	if !strings.ContainsAny(v, `\*?[`) {
		return v, false
	}
	var b strings.Builder
	glob := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			if v[i] != '\n' {
				b.WriteByte(v[i])
			}
		case c == '*' || c == '?':
			glob = true
			b.WriteByte(c)
		case c == '[' && strings.IndexByte(v[i+1:], ']') >= 0:
			glob = true
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), glob
}

// dquotedLit removes the backslashes that are escapes inside double quotes
// (before $ ` " \ and newline).
func dquotedLit(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// ansiC decodes the escapes of a $'...' string as bash does.
func ansiC(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 >= len(v) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := v[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i] & 0x1f)
			} else {
				b.WriteString(`\c`)
			}
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(v) && j-i-1 < max && isHex(v[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(v[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(v) && j-i < 3 && v[j] >= '0' && v[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(v[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// sourceText is the whole text of node n in src ("" when unknown).
func sourceText(n syntax.Node, src string) string {
	start, end := n.Pos(), n.End()
	if !start.IsValid() || !end.IsValid() {
		return ""
	}
	s, e := int(start.Offset()), int(end.Offset())
	if s < 0 || e > len(src) || s >= e {
		return ""
	}
	return src[s:e]
}
