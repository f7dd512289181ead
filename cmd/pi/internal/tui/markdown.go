package tui

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// The assistant's markdown is parsed by goldmark's CommonMark parser (its
// core only: the extension package and glamour's chroma, bluemonday and
// CSS packages cost some 25 ms of package init at every start of pi, see
// docs/design.md) plus our pipe-table paragraph transformer (mdtable.go),
// and laid out here as lines of text for the terminal: words wrapped to
// the width, then styled one word run at a time so a line never ends
// inside a style and wrapping never cuts an escape sequence. A run is
// styled with the escape sequences its look's lipgloss style writes around
// one line of text (mdSGR, worked out once per look and colour profile),
// not with a lipgloss Render call per run, which cost a third of the time.

// markdown renders assistant text as markdown for a terminal width.
type markdown struct {
	width int
	lr    *lipgloss.Renderer

	mu   sync.Mutex // guards prof and sgr
	prof termenv.Profile
	sgr  map[mdAttr]mdSGR // the looks seen so far, for prof
}

// newMarkdown renders for a terminal of the given width with the colour
// profile of the terminal (lipgloss's default renderer, which honours
// NO_COLOR and a terminal without colours).
func newMarkdown(width int) *markdown {
	return newMarkdownWith(width, lipgloss.DefaultRenderer())
}

// newMarkdownWith renders with the colour profile of lr.
func newMarkdownWith(width int, lr *lipgloss.Renderer) *markdown {
	return &markdown{width: width, lr: lr}
}

// wrapWidth is the width text is wrapped to: two columns less than the
// terminal, at least 20.
func (m *markdown) wrapWidth() int { return max(m.width-2, 20) }

// render returns text rendered; text itself (cleaned) if rendering failed.
func (m *markdown) render(text string) (out string) {
	if m == nil {
		return clean(text)
	}
	defer func() {
		if recover() != nil {
			out = clean(text)
		}
	}()
	return m.renderText(text)
}

// renderText renders text; it is render without the safety net (the fuzz
// target calls it so that a panic is found, not hidden).
func (m *markdown) renderText(text string) string {
	str := clean(expandTabs(text))
	src := []byte(str)
	doc := mdParser().Parse(textReader(src))
	r := &mdRenderer{src: src, str: str, md: m, prof: m.lr.ColorProfile()}
	ls := r.blocks(doc, m.wrapWidth(), false)
	return strings.Join(ls, "\n")
}

func textReader(src []byte) text.Reader { return text.NewReader(src) }

// mdParser is goldmark's CommonMark parser with the pipe-table
// transformer; one for all renders (goldmark's parser keeps its state per
// Parse call).
var mdParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(),
			util.Prioritized(mdTableTransformer{}, 200))...),
	)
})

// expandTabs replaces tabs with spaces to the next multiple of 4 columns
// (clean would make each one space, which flattens code indentation); a
// column is a rune, or a byte that is not UTF-8.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 3*strings.Count(s, "\t"))
	col := 0
	for s != "" {
		i := strings.IndexAny(s, "\t\n")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		if s[i] == '\n' {
			b.WriteByte('\n')
			col = 0
		} else {
			col += utf8.RuneCountInString(s[:i])
			n := 4 - col%4
			b.WriteString("    "[:n])
			col += n
		}
		s = s[i+1:]
	}
	return b.String()
}

// mdAttr is the look of a piece of text: a set of attributes.
type mdAttr uint16

const (
	aStrong mdAttr = 1 << iota
	aEm
	aCode
	aLink
	aDim // URLs, code labels, rules, quote bars, table lines
	aHeading
	aMarker // list bullets and numbers, task boxes

	mdAttrs = aMarker << 1 // how many sets of attributes there are
)

// maxNesting is how deep containers (quotes, lists) indent; deeper ones
// are laid out at the same indentation without bars or markers, so that
// deeply nested input costs linear time and its lines keep some width.
const maxNesting = 12

// mdRenderer lays out one document.
type mdRenderer struct {
	src   []byte
	str   string // src as a string, which text is cut from without a copy
	md    *markdown
	prof  termenv.Profile // lipgloss's colour profile when the render began
	sgr   [mdAttrs]*mdSGR // the looks used so far
	depth int             // containers we are in
	lists int             // lists we are in (picks the bullet)
	// stripTask: the next paragraph starts with a task box to drop (the
	// list item shows it as its marker).
	stripTask bool
	// wordBuf and fragBuf are the words' buffers, reused (words);
	// inlineBuf holds the inline content of a paragraph or a heading
	// until it is wrapped.
	wordBuf   []mdWord
	fragBuf   []mdFrag
	inlineBuf []mdFrag
	lineBuf   []byte // a line being painted (line)
}

// mdStyle is the lipgloss style of a set of attributes.
func mdStyle(lr *lipgloss.Renderer, a mdAttr) lipgloss.Style {
	s := lr.NewStyle()
	if a&aHeading != 0 {
		s = s.Bold(true).Foreground(lipgloss.Color("12"))
	}
	if a&aStrong != 0 {
		s = s.Bold(true)
	}
	if a&aEm != 0 {
		s = s.Italic(true)
	}
	if a&aCode != 0 {
		s = s.Foreground(lipgloss.Color("11"))
	}
	if a&aLink != 0 {
		// Not underlined: lipgloss underlines one character at a time,
		// an escape sequence pair for each.
		s = s.Foreground(lipgloss.Color("14"))
	}
	if a&aMarker != 0 {
		s = s.Foreground(lipgloss.Color("6"))
	}
	if a&aDim != 0 {
		s = s.Foreground(lipgloss.Color("8"))
	}
	return s
}

// mdSGR is what a look's lipgloss style writes before and after a line of
// text (no tab, no line break: lipgloss would change those): for any such
// text t, on+t+off is the style's Render(t). Both are empty without
// colours.
type mdSGR struct{ on, off string }

// sgrMarker is the text rendered to find a style's sequences: printable,
// one column, and in no SGR sequence.
const sgrMarker = "@"

// newMDSGR renders the marker in the style and splits the result around it.
func newMDSGR(st lipgloss.Style) mdSGR {
	out := st.Render(sgrMarker)
	i := strings.Index(out, sgrMarker)
	if i < 0 {
		panic(fmt.Sprintf("markdown: the style lost its text: %q", out))
	}
	return mdSGR{on: out[:i], off: out[i+len(sgrMarker):]}
}

// looks returns the sequences of a for the colour profile prof, worked out
// once per look while the profile stays the same.
func (m *markdown) looks(prof termenv.Profile, a mdAttr) mdSGR {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sgr == nil || m.prof != prof {
		m.sgr, m.prof = map[mdAttr]mdSGR{}, prof
	}
	q, ok := m.sgr[a]
	if !ok {
		q = newMDSGR(mdStyle(m.lr, a))
		m.sgr[a] = q
	}
	return q
}

// look is the sequences of a in this render.
func (r *mdRenderer) look(a mdAttr) *mdSGR {
	if q := r.sgr[a]; q != nil {
		return q
	}
	q := r.md.looks(r.prof, a)
	r.sgr[a] = &q
	return &q
}

// paint renders s (one line) in the look a.
func (r *mdRenderer) paint(s string, a mdAttr) string {
	if a == 0 || s == "" {
		return s
	}
	q := r.look(a)
	return q.on + s + q.off
}

// blocks lays out the block children of parent, one blank line between
// them unless tight.
func (r *mdRenderer) blocks(parent ast.Node, width int, tight bool) []string {
	var out []string
	for c := parent.FirstChild(); c != nil; c = c.NextSibling() {
		ls := r.block(c, width)
		if len(ls) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, ls...)
	}
	return out
}

// block lays out one block node as lines of at most width columns (but
// for code, HTML and words longer than the width).
func (r *mdRenderer) block(n ast.Node, width int) []string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		fr := r.inlines(n, 0, r.inlineBuf[:0])
		r.inlineBuf = fr[:0]
		return r.wrap(fr, width, false)
	case *ast.Heading:
		fr := append(r.inlineBuf[:0], mdFrag{strings.Repeat("#", n.Level) + " ", aHeading})
		fr = r.inlines(n, aHeading, fr)
		r.inlineBuf = fr[:0]
		return r.wrap(fr, width, false)
	case *ast.ThematicBreak:
		return []string{r.paint(strings.Repeat("─", width), aDim)}
	case *ast.CodeBlock:
		return r.code(n, "")
	case *ast.FencedCodeBlock:
		lang := ""
		if n.Info != nil {
			lang = inlineText(mdUnescape(string(n.Language(r.src))))
		}
		return r.code(n, lang)
	case *ast.HTMLBlock:
		var out []string
		for i := 0; i < n.Lines().Len(); i++ {
			out = append(out, lineText(r.segText(n.Lines().At(i))))
		}
		if n.HasClosure() {
			out = append(out, lineText(r.segText(n.ClosureLine)))
		}
		return out
	case *ast.Blockquote:
		return r.quote(n, width)
	case *ast.List:
		return r.list(n, width)
	case *mdTable:
		return r.table(n, width)
	}
	return r.blocks(n, width, false)
}

// lineText is a verbatim line of the source without its line ending.
func lineText(s string) string {
	return clean(strings.TrimRight(s, "\r\n"))
}

// segText is the text of a segment, as its Value: the padding as spaces,
// then the source, then a line break when one is forced; a string cut
// from the source, not a copy, when there is no padding.
func (r *mdRenderer) segText(seg text.Segment) string {
	v := r.str[seg.Start:seg.Stop]
	if seg.Padding > 0 {
		v = strings.Repeat(" ", seg.Padding) + v
	}
	if seg.ForceNewline && v != "" && v[len(v)-1] != '\n' {
		v += "\n"
	}
	return v
}

// code lays out a code block: a dim language label, then its lines as
// they are, indented by two columns, never wrapped.
func (r *mdRenderer) code(n ast.Node, lang string) []string {
	var out []string
	if lang != "" {
		out = append(out, "  "+r.paint(lang, aDim))
	}
	lines := n.Lines()
	end := lines.Len()
	for end > 0 && strings.TrimSpace(r.segText(lines.At(end-1))) == "" {
		end--
	}
	for i := 0; i < end; i++ {
		l := strings.TrimRight(lineText(r.segText(lines.At(i))), " ")
		if l == "" {
			out = append(out, "")
			continue
		}
		out = append(out, "  "+l)
	}
	if len(out) == 0 {
		out = append(out, "")
	}
	return out
}

// nest runs f for a container's children: at width-indent, or at width
// when containers are nested deeper than maxNesting (then indent is 0).
func (r *mdRenderer) nest(width, indent int, f func(width int, indented bool) []string) []string {
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > maxNesting {
		return f(width, false)
	}
	return f(max(width-indent, 1), true)
}

// quote lays out a block quote with a bar before each line.
func (r *mdRenderer) quote(n *ast.Blockquote, width int) []string {
	return r.nest(width, 2, func(w int, indented bool) []string {
		ls := r.blocks(n, w, false)
		if !indented {
			return ls
		}
		bar := r.paint("│", aDim)
		for i, l := range ls {
			if l == "" {
				ls[i] = bar
			} else {
				ls[i] = bar + " " + l
			}
		}
		if len(ls) == 0 {
			ls = []string{bar}
		}
		return ls
	})
}

// bullets are the markers of unordered lists by depth.
var bullets = []string{"•", "◦", "▪"}

// list lays out a list: each item's first line after its marker, the
// others indented to the marker's width; a blank line between the items
// of a loose list.
func (r *mdRenderer) list(n *ast.List, width int) []string {
	bullet := bullets[r.lists%len(bullets)]
	r.lists++
	defer func() { r.lists-- }()
	count := n.ChildCount()
	numW := 0
	if n.IsOrdered() {
		numW = len(strconv.Itoa(n.Start + count - 1))
	}
	var out []string
	i := 0
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		marker := bullet
		if n.IsOrdered() {
			marker = fmt.Sprintf("%*d%c", numW, n.Start+i, n.Marker)
		}
		i++
		task, checked := r.taskItem(item)
		if task {
			box := "[ ]"
			if checked {
				box = "[x]"
			}
			if n.IsOrdered() {
				marker += " " + box
			} else {
				marker = box
			}
		}
		markerW := textWidth(marker) + 1
		ls := r.nest(width, markerW, func(w int, indented bool) []string {
			if task {
				defer func(old bool) { r.stripTask = old }(r.stripTask)
				r.stripTask = true
			}
			ls := r.blocks(item, w, n.IsTight)
			if !indented {
				return ls // no marker either: each would lengthen the line
			}
			pad := strings.Repeat(" ", markerW)
			for j, l := range ls {
				if j > 0 && l != "" {
					ls[j] = pad + l
				}
			}
			first := r.paint(marker, aMarker)
			if len(ls) == 0 || ls[0] == "" {
				return append([]string{first}, ls[min(1, len(ls)):]...)
			}
			ls[0] = first + " " + ls[0]
			return ls
		})
		if len(out) > 0 && !n.IsTight {
			out = append(out, "")
		}
		out = append(out, ls...)
	}
	return out
}

// taskItem says whether a list item starts with a task box ("[ ] ",
// "[x] " or "[X] ") in plain text, and whether it is checked.
func (r *mdRenderer) taskItem(item ast.Node) (task, checked bool) {
	first := item.FirstChild()
	if first == nil || first.Lines().Len() == 0 {
		return false, false
	}
	switch first.(type) {
	case *ast.Paragraph, *ast.TextBlock:
	default:
		return false, false
	}
	line := segValue(first.Lines().At(0), r.src)
	if len(line) < 4 || line[0] != '[' || line[2] != ']' || (line[3] != ' ' && line[3] != '\n') {
		return false, false
	}
	switch line[1] {
	case ' ':
		return true, false
	case 'x', 'X':
		return true, true
	}
	return false, false
}

// mdFrag is a piece of inline text and its look; the text never holds a
// line break, but a fragment of exactly "\n" is a hard line break.
type mdFrag struct {
	s string
	a mdAttr
}

const hardBreak = "\n"

// inlines appends the inline content of n, in the look a, to out.
func (r *mdRenderer) inlines(n ast.Node, a mdAttr, out []mdFrag) []mdFrag {
	start := len(out)
	out = r.inline(n, a, out)
	if r.stripTask {
		// The task box "[ ]" was read as text: drop it and the space after
		// (only the first block of the item has one).
		r.stripTask = false
		out = dropTaskBox(out, start, a)
	}
	return out
}

func (r *mdRenderer) inline(n ast.Node, a mdAttr, out []mdFrag) []mdFrag {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := r.segText(c.Segment)
			if c.IsRaw() {
				out = append(out, mdFrag{inlineText(v), a})
			} else {
				out = append(out, mdFrag{inlineText(mdUnescape(v)), a})
			}
			if c.HardLineBreak() {
				out = append(out, mdFrag{hardBreak, a})
			} else if c.SoftLineBreak() {
				out = append(out, mdFrag{" ", a})
			}
		case *ast.String:
			if c.IsRaw() || c.IsCode() {
				out = append(out, mdFrag{inlineText(string(c.Value)), a})
			} else {
				out = append(out, mdFrag{inlineText(mdUnescape(string(c.Value))), a})
			}
		case *ast.CodeSpan:
			var b strings.Builder
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				switch t := t.(type) {
				case *ast.Text:
					b.WriteString(r.segText(t.Segment))
				case *ast.String:
					b.Write(t.Value)
				}
			}
			out = append(out, mdFrag{inlineText(b.String()), a | aCode})
		case *ast.Emphasis:
			if c.Level >= 2 {
				out = r.inline(c, a|aStrong, out)
			} else {
				out = r.inline(c, a|aEm, out)
			}
		case *ast.Link:
			out = r.link(c, a, string(c.Destination), "", out)
		case *ast.Image:
			out = r.link(c, a, string(c.Destination), "image: ", out)
		case *ast.AutoLink:
			out = append(out, mdFrag{inlineText(string(c.Label(r.src))), a | aLink})
		case *ast.RawHTML:
			var b strings.Builder
			for i := 0; i < c.Segments.Len(); i++ {
				b.WriteString(r.segText(c.Segments.At(i)))
			}
			out = append(out, mdFrag{inlineText(b.String()), a})
		default:
			out = r.inline(c, a, out)
		}
	}
	return out
}

// link appends a link's (or an image's) text, then its destination
// dimmed in parentheses unless the text is the destination.
func (r *mdRenderer) link(n ast.Node, a mdAttr, dest, prefix string, out []mdFrag) []mdFrag {
	if prefix != "" {
		out = append(out, mdFrag{prefix, a | aDim})
	}
	start := len(out)
	out = r.inline(n, a|aLink, out)
	url := inlineText(mdUnescape(dest))
	if url != "" && !sameText(out[start:], url) {
		if !sameText(out[start:], "") {
			out = append(out, mdFrag{" ", a})
		}
		out = append(out, mdFrag{"(" + url + ")", a | aDim})
	}
	return out
}

// sameText says whether the texts of frags, one after the other, are s.
func sameText(frags []mdFrag, s string) bool {
	for _, f := range frags {
		if !strings.HasPrefix(s, f.s) {
			return false
		}
		s = s[len(f.s):]
	}
	return s == ""
}

// dropTaskBox removes the first three bytes ("[ ]") of the plain text
// from out[start:] and the spaces after them.
func dropTaskBox(out []mdFrag, start int, a mdAttr) []mdFrag {
	skip := 3
	i := start
	for i < len(out) && skip > 0 {
		f := &out[i]
		if f.a != a {
			return out
		}
		n := min(skip, len(f.s))
		f.s = f.s[n:]
		skip -= n
		if f.s == "" {
			i++
		}
	}
	for i < len(out) && out[i].a == a {
		out[i].s = strings.TrimLeft(out[i].s, " ")
		if out[i].s != "" {
			break
		}
		i++
	}
	return out
}

// inlineText makes decoded text safe and one line: control characters
// dropped (a character reference such as &#27; decodes to one), line
// breaks made spaces.
func inlineText(s string) string {
	return strings.ReplaceAll(clean(s), "\n", " ")
}

// mdUnescape resolves backslash escapes and entity and numeric character
// references, as CommonMark renders text.
func mdUnescape(b string) string {
	if strings.IndexByte(b, '\\') < 0 && strings.IndexByte(b, '&') < 0 {
		return b
	}
	var sb strings.Builder
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\\' && i+1 < len(b) && util.IsPunct(b[i+1]) {
			sb.WriteByte(b[i+1])
			i++
			continue
		}
		if c == '&' {
			if s, n := mdEntity(b[i:]); n > 0 {
				sb.WriteString(s)
				i += n - 1
				continue
			}
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

// mdEntity decodes the reference at the start of b ("&amp;", "&#35;",
// "&#x23;"); n is its length, 0 when b does not start with one.
func mdEntity(b string) (s string, n int) {
	end := strings.IndexByte(b[:min(len(b), 40)], ';')
	if end < 2 {
		return "", 0
	}
	body := b[1:end]
	if body[0] == '#' {
		digits, base, maxLen := body[1:], 10, 7
		if len(digits) > 0 && (digits[0] == 'x' || digits[0] == 'X') {
			digits, base, maxLen = digits[1:], 16, 6
		}
		if len(digits) == 0 || len(digits) > maxLen {
			return "", 0
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return "", 0
		}
		return string(util.ToValidRune(rune(v))), end + 1
	}
	for i := 0; i < len(body); i++ {
		if !util.IsAlphaNumeric(body[i]) {
			return "", 0
		}
	}
	if e, ok := util.LookUpHTML5EntityByName(body); ok {
		return string(e.Characters), end + 1
	}
	return "", 0
}

// mdWord is a run of fragments between spaces, or a hard break.
type mdWord struct {
	frags []mdFrag
	w     int // columns
	brk   bool
}

// textWidth is the columns s takes on the terminal: its length when it is
// printable ASCII, else what ansi.StringWidth says.
func textWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// words splits fragments into words at spaces. The words and their
// fragments are kept in the renderer's buffers (each word's fragments
// capped at its end): they hold until the next call.
func (r *mdRenderer) words(frags []mdFrag) []mdWord {
	ws, all := r.wordBuf[:0], r.fragBuf[:0]
	defer func() { r.wordBuf, r.fragBuf = ws[:0], all[:0] }()
	var cur mdWord
	start := 0
	flush := func() {
		if len(all) > start {
			cur.frags = all[start:len(all):len(all)]
			ws = append(ws, cur)
		}
		cur, start = mdWord{}, len(all)
	}
	for _, f := range frags {
		if f.s == hardBreak {
			flush()
			ws = append(ws, mdWord{brk: true})
			continue
		}
		s := f.s
		for s != "" {
			i := strings.IndexByte(s, ' ')
			piece := s
			if i >= 0 {
				piece, s = s[:i], s[i+1:]
			} else {
				s = ""
			}
			if piece != "" {
				all = append(all, mdFrag{piece, f.a})
				cur.w += textWidth(piece)
			}
			if i >= 0 {
				flush()
			}
		}
	}
	flush()
	return ws
}

// splitWord cuts a word wider than width into pieces of at most width
// columns (a piece holds at least one character).
func splitWord(w mdWord, width int) []mdWord {
	var out []mdWord
	var cur mdWord
	for _, f := range w.frags {
		s := f.s
		for s != "" {
			start := 0
			for start < len(s) {
				_, size := utf8.DecodeRuneInString(s[start:])
				rw := ansi.StringWidth(s[start : start+size])
				if cur.w+rw > width && (cur.w > 0 || start > 0) {
					break
				}
				cur.w += rw
				start += size
			}
			if start > 0 {
				cur.frags = append(cur.frags, mdFrag{s[:start], f.a})
				s = s[start:]
			}
			if s != "" {
				out = append(out, cur)
				cur = mdWord{}
			}
		}
	}
	if len(cur.frags) > 0 {
		out = append(out, cur)
	}
	return out
}

// wrap fills lines of at most width columns with the words of frags,
// greedily; a word wider than the width has a line of its own (or, with
// breakLong, is cut).
func (r *mdRenderer) wrap(frags []mdFrag, width int, breakLong bool) []string {
	ws := r.words(frags)
	if breakLong {
		for i, w := range ws {
			if w.w > width {
				ws = cutLong(ws, i, width)
				break
			}
		}
	}
	var out []string
	start, lw := 0, 0 // the line so far: ws[start:i], lw columns
	for i, w := range ws {
		switch {
		case w.brk:
			out = append(out, r.line(ws[start:i]))
			start, lw = i+1, 0
			continue
		case i > start && lw+1+w.w > width:
			out = append(out, r.line(ws[start:i]))
			start, lw = i, 0
		}
		if i > start {
			lw++
		}
		lw += w.w
	}
	if start < len(ws) {
		out = append(out, r.line(ws[start:]))
	}
	return out
}

// cutLong returns ws with its words wider than width, from the first one
// at i, cut into pieces (splitWord).
func cutLong(ws []mdWord, i, width int) []mdWord {
	out := append(make([]mdWord, 0, len(ws)+8), ws[:i]...)
	for _, w := range ws[i:] {
		if !w.brk && w.w > width {
			out = append(out, splitWord(w, width)...)
		} else {
			out = append(out, w)
		}
	}
	return out
}

// line renders the words of a line: runs of one look painted together, the
// space between two words in their look when they share it.
func (r *mdRenderer) line(ws []mdWord) string {
	b := r.lineBuf[:0]
	defer func() { r.lineBuf = b[:0] }()
	runA := mdAttr(0)
	var q *mdSGR // runA's sequences once its run has text
	put := func(s string, a mdAttr) {
		if a != runA {
			if q != nil {
				b = append(b, q.off...)
				q = nil
			}
			runA = a
		}
		if s == "" {
			return
		}
		if q == nil && runA != 0 {
			q = r.look(runA)
			b = append(b, q.on...)
		}
		b = append(b, s...)
	}
	for i, w := range ws {
		if i > 0 {
			sp := mdAttr(0)
			if runA == w.frags[0].a {
				sp = runA
			}
			put(" ", sp)
		}
		for _, f := range w.frags {
			put(f.s, f.a)
		}
	}
	if q != nil {
		b = append(b, q.off...)
	}
	return string(b)
}
