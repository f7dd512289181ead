package tui

import (
	"bytes"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// GFM pipe tables. goldmark's core does not parse them (its extension
// package does, at an init cost we do not pay), so a paragraph
// transformer of ours finds them: a paragraph line whose cells are
// delimiters (---, :--, --:, :-:) with a pipe, under a line with as many
// cells, starts a table; every later line of the paragraph is a row (cells
// beyond the header's count dropped, missing ones empty). Lines before the
// header stay a paragraph. Cells are block nodes holding their segment of
// the source, so goldmark parses their inline content like any other.

// mdAlign is a column's alignment.
type mdAlign uint8

const (
	alignLeft mdAlign = iota
	alignCenter
	alignRight
)

var (
	kindMDTable     = ast.NewNodeKind("PiTable")
	kindMDTableRow  = ast.NewNodeKind("PiTableRow")
	kindMDTableCell = ast.NewNodeKind("PiTableCell")
)

// mdTable is a pipe table; its children are mdTableRows.
type mdTable struct {
	ast.BaseBlock
	aligns []mdAlign
}

// Kind implements ast.Node.
func (n *mdTable) Kind() ast.NodeKind { return kindMDTable }

// Dump implements ast.Node.
func (n *mdTable) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// mdTableRow is a row of a table; its children are mdTableCells.
type mdTableRow struct {
	ast.BaseBlock
	header bool
}

// Kind implements ast.Node.
func (n *mdTableRow) Kind() ast.NodeKind { return kindMDTableRow }

// Dump implements ast.Node.
func (n *mdTableRow) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// mdTableCell is a cell; its one line is parsed as inline content.
type mdTableCell struct{ ast.BaseBlock }

// Kind implements ast.Node.
func (n *mdTableCell) Kind() ast.NodeKind { return kindMDTableCell }

// Dump implements ast.Node.
func (n *mdTableCell) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// mdTableTransformer turns paragraphs that hold a pipe table into one.
type mdTableTransformer struct{}

// Transform implements parser.ParagraphTransformer.
func (mdTableTransformer) Transform(p *ast.Paragraph, reader text.Reader, _ parser.Context) {
	lines := p.Lines()
	src := reader.Source()
	for i := 1; i < lines.Len(); i++ {
		aligns, ok := mdDelimRow(segValue(lines.At(i), src))
		if !ok {
			continue
		}
		head := mdCells(src, lines.At(i-1))
		if len(head) != len(aligns) {
			continue
		}
		t := &mdTable{aligns: aligns}
		t.AppendChild(t, mdRow(head, len(aligns), true))
		for j := i + 1; j < lines.Len(); j++ {
			t.AppendChild(t, mdRow(mdCells(src, lines.At(j)), len(aligns), false))
		}
		parent := p.Parent()
		parent.InsertAfter(parent, p, t)
		if i == 1 {
			parent.RemoveChild(parent, p)
		} else {
			lines.SetSliced(0, i-1)
		}
		return
	}
}

func mdRow(cells []text.Segment, n int, header bool) *mdTableRow {
	row := &mdTableRow{header: header}
	for k := 0; k < n; k++ {
		c := &mdTableCell{}
		if k < len(cells) && cells[k].Len() > 0 {
			c.Lines().Append(cells[k])
		}
		row.AppendChild(row, c)
	}
	return row
}

// mdDelimRow reads a delimiter row: its columns' alignments.
func mdDelimRow(line []byte) ([]mdAlign, bool) {
	if bytes.IndexByte(line, '|') < 0 {
		return nil, false
	}
	s := strings.TrimSpace(string(line))
	s = strings.TrimPrefix(s, "|")
	s = strings.TrimSuffix(s, "|")
	var aligns []mdAlign
	for _, c := range strings.Split(s, "|") {
		c = strings.TrimSpace(c)
		core := strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if core == "" || strings.Trim(core, "-") != "" {
			return nil, false
		}
		left, right := c[0] == ':', c[len(c)-1] == ':'
		switch {
		case left && right:
			aligns = append(aligns, alignCenter)
		case right:
			aligns = append(aligns, alignRight)
		default:
			aligns = append(aligns, alignLeft)
		}
	}
	return aligns, true
}

// mdCells splits a row line at its unescaped pipes (a leading and a
// trailing pipe are optional) into trimmed cell segments.
func mdCells(src []byte, seg text.Segment) []text.Segment {
	lo, hi := seg.Start, seg.Stop
	for lo < hi && isBlank(src[lo]) {
		lo++
	}
	for hi > lo && isBlank(src[hi-1]) {
		hi--
	}
	if lo < hi && src[lo] == '|' {
		lo++
	}
	if hi > lo && src[hi-1] == '|' && (hi-2 < lo || src[hi-2] != '\\') {
		hi--
	}
	var cells []text.Segment
	start := lo
	for i := lo; i < hi; i++ {
		switch src[i] {
		case '\\':
			i++
		case '|':
			cells = append(cells, mdTrim(src, start, i))
			start = i + 1
		}
	}
	return append(cells, mdTrim(src, start, hi))
}

func mdTrim(src []byte, lo, hi int) text.Segment {
	for lo < hi && isBlank(src[lo]) {
		lo++
	}
	for hi > lo && isBlank(src[hi-1]) {
		hi--
	}
	return text.NewSegment(lo, hi)
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// table lays out a table in a box: columns as wide as their widest cell,
// or, when the table is wider than width, the widest columns narrowed
// until it fits and their cells wrapped (long words cut); box-drawing
// lines around it, between the columns and under the header, all dim.
func (r *mdRenderer) table(t *mdTable, width int) []string {
	ncol := len(t.aligns)
	type row struct {
		cells  [][]mdFrag
		header bool
	}
	var rows []row
	nat := make([]int, ncol)
	for i := range nat {
		nat[i] = 1
	}
	for n := t.FirstChild(); n != nil; n = n.NextSibling() {
		tr := n.(*mdTableRow)
		a := mdAttr(0)
		if tr.header {
			a = aStrong
		}
		var cells [][]mdFrag
		for c := tr.FirstChild(); c != nil; c = c.NextSibling() {
			fr := r.inline(c, a, nil)
			ws := r.words(fr)
			w := 0
			for i, wd := range ws {
				if i > 0 && !wd.brk {
					w++
				}
				w += wd.w
			}
			nat[len(cells)] = max(nat[len(cells)], w)
			cells = append(cells, fr)
		}
		rows = append(rows, row{cells, tr.header})
	}
	// "│ " before each column, " │" after each: 3 columns a column and one.
	colW := fitColumns(nat, width-3*ncol-1)
	rule := func(left, mid, right string) string {
		parts := make([]string, ncol)
		for k := range parts {
			parts[k] = strings.Repeat("─", colW[k]+2)
		}
		return r.paint(left+strings.Join(parts, mid)+right, aDim)
	}
	bar := r.paint("│", aDim)
	out := []string{rule("┌", "┬", "┐")}
	for _, rw := range rows {
		cellLines := make([][]string, ncol)
		height := 1
		for k, fr := range rw.cells {
			cellLines[k] = r.wrap(fr, colW[k], true)
			height = max(height, len(cellLines[k]))
		}
		for i := 0; i < height; i++ {
			var b strings.Builder
			for k := range ncol {
				b.WriteString(bar + " ")
				l := ""
				if i < len(cellLines[k]) {
					l = cellLines[k][i]
				}
				b.WriteString(pad(l, colW[k], t.aligns[k]) + " ")
			}
			b.WriteString(bar)
			out = append(out, b.String())
		}
		if rw.header {
			out = append(out, rule("├", "┼", "┤"))
		}
	}
	return append(out, rule("└", "┴", "┘"))
}

// pad fills a cell's line to w columns by its alignment.
func pad(l string, w int, a mdAlign) string {
	gap := max(w-ansi.StringWidth(l), 0)
	switch a {
	case alignRight:
		return strings.Repeat(" ", gap) + l
	case alignCenter:
		return strings.Repeat(" ", gap/2) + l + strings.Repeat(" ", gap-gap/2)
	}
	return l + strings.Repeat(" ", gap)
}

// fitColumns returns the columns' widths: their natural widths when they
// fit in avail, else the widest ones cut to the largest common cap that
// fits (and the columns left over widened by one in turn); at least 1.
func fitColumns(nat []int, avail int) []int {
	sum := func(c int) int {
		s := 0
		for _, w := range nat {
			s += min(w, c)
		}
		return s
	}
	widest := 0
	for _, w := range nat {
		widest = max(widest, w)
	}
	out := make([]int, len(nat))
	if sum(widest) <= avail {
		copy(out, nat)
		return out
	}
	lo, hi := 1, widest // sum(lo) may not fit; find the largest cap that does
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if sum(mid) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	left := avail - sum(lo)
	for i, w := range nat {
		out[i] = min(w, lo)
		if w > lo && left > 0 {
			out[i]++
			left--
		}
	}
	return out
}

// segValue is the bytes of a segment (Value has a pointer receiver).
func segValue(s text.Segment, src []byte) []byte { return s.Value(src) }
