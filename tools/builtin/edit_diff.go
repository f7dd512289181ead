package builtin

import (
	"fmt"
	"strings"
)

// diffContextLines is how many unchanged lines the edit diff shows around a
// change.
const diffContextLines = 4

// diffPart is a run of whole lines (each with its '\n', except possibly the
// text's last) that is equal, added or removed.
type diffPart struct {
	op    byte // ' ', '+', '-'
	lines []string
	// n, when set, is the number of lines of an unchanged part of which
	// lines holds only the first and last diffContextLines (all the diff
	// shows of it): the common head of a large file is not split.
	n int
}

// count is the number of lines of the part.
func (p diffPart) count() int {
	if p.n > 0 {
		return p.n
	}
	return len(p.lines)
}

// firstLines and lastLines are the part's first and last k lines (k at
// most diffContextLines when the part is abbreviated).
func (p diffPart) firstLines(k int) []string { return p.lines[:k] }
func (p diffPart) lastLines(k int) []string  { return p.lines[len(p.lines)-k:] }

// equalPart is the unchanged part of text s: whole when short, else its
// first and last diffContextLines lines and its line count.
func equalPart(s string) diffPart {
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	if n <= 2*diffContextLines+1 {
		return diffPart{op: ' ', lines: splitLineTokens(s)}
	}
	head := s
	for range diffContextLines {
		head = head[strings.IndexByte(head, '\n')+1:]
	}
	tail := s
	for range diffContextLines {
		tail = tail[:strings.LastIndexByte(strings.TrimSuffix(tail, "\n"), '\n')+1]
	}
	lines := splitLineTokens(s[:len(s)-len(head)])
	lines = append(lines, splitLineTokens(s[len(tail):])...)
	return diffPart{op: ' ', lines: lines, n: n}
}

// splitLineTokens splits s into lines that keep their '\n'.
func splitLineTokens(s string) []string {
	if s == "" {
		return nil
	}
	out := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// diffLines is a line diff of a and b with the choices of the reference
// agent's diff library (jsdiff's diffLines): lines keep their '\n', the
// common head is set aside, then a Myers search that, between equally short
// scripts, follows the path furthest along the old text, so a change shows
// its removals before its additions and as late as the texts allow.
func diffLines(a, b string) []diffPart { return diffPieces(a, []string{b}, true) }

// diffLinesWith is diffLines; abbreviate false keeps every line of the
// common head (tests rebuild the texts from the parts).
func diffLinesWith(a, b string, abbreviate bool) []diffPart {
	return diffPieces(a, []string{b}, abbreviate)
}

// diffPieces is diffLinesWith for a new text given as pieces (their
// concatenation): lines that lie within one piece are substrings of it,
// so the new text of an edit is never joined.
func diffPieces(a string, b []string, abbreviate bool) []diffPart {
	head := commonLinePrefix(a, b)
	var parts []diffPart
	switch {
	case head > 0 && abbreviate:
		parts = append(parts, equalPart(a[:head]))
	case head > 0:
		parts = append(parts, diffPart{op: ' ', lines: splitLineTokens(a[:head])})
	}
	for _, p := range myers(splitLineTokens(a[head:]), splitPieceLines(b, head)) {
		if k := len(parts) - 1; k >= 0 && parts[k].op == p.op {
			parts[k].lines = append(parts[k].lines, p.lines...)
			continue
		}
		parts = append(parts, p)
	}
	return parts
}

// commonLinePrefix is the length of the longest common prefix of a and b
// (the concatenation of its pieces) that ends at a line end, or that is
// all of both.
func commonLinePrefix(a string, b []string) int {
	i, bLen, differ := 0, 0, false
	for _, p := range b {
		bLen += len(p)
		if differ {
			continue
		}
		n := min(len(p), len(a)-i)
		if q := a[i : i+n]; p[:n] != q {
			j := 0
			for p[j] == q[j] {
				j++
			}
			i += j
			differ = true
			continue
		}
		i += n
		differ = n < len(p) // a ended inside p
	}
	if i == len(a) && i == bLen {
		return i
	}
	return strings.LastIndexByte(a[:i], '\n') + 1
}

// splitPieceLines is splitLineTokens of the concatenation of pieces from
// byte from on: a line within one piece is a substring of it; only a line
// that spans pieces is copied.
func splitPieceLines(pieces []string, from int) []string {
	n := 0
	for _, p := range pieces {
		n += strings.Count(p, "\n")
	}
	out := make([]string, 0, n+1)
	line := "" // the start of a line that continues in the next piece
	for _, p := range pieces {
		skip := min(from, len(p))
		from -= skip
		p = p[skip:]
		for p != "" {
			i := strings.IndexByte(p, '\n')
			if i < 0 {
				line = joinLine(line, p)
				break
			}
			out = append(out, joinLine(line, p[:i+1]))
			line, p = "", p[i+1:]
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

// joinLine is a + b, without a copy when a is empty.
func joinLine(a, b string) string {
	if a == "" {
		return b
	}
	return a + b
}

// myersMaxD bounds the edit distance the diff searches; beyond it the
// changed rest is shown as removed then added.
const myersMaxD = 1000

// diffComponent is a run of one kind in an edit script, linked backwards.
type diffComponent struct {
	count          int
	added, removed bool
	prev           *diffComponent
}

// diffPath is the furthest point reached on one diagonal: oldPos is the
// last old line consumed (-1 before any).
type diffPath struct {
	oldPos int
	last   *diffComponent
}

// myers diffs two line lists with Myers' greedy search, pruning diagonals
// that ran off the edge of the edit graph.
func myers(a, b []string) []diffPart {
	oldLen, newLen := len(a), len(b)
	step := func(p *diffPath, added, removed bool, inc int) *diffPath {
		if l := p.last; l != nil && l.added == added && l.removed == removed {
			return &diffPath{p.oldPos + inc, &diffComponent{l.count + 1, added, removed, l.prev}}
		}
		return &diffPath{p.oldPos + inc, &diffComponent{1, added, removed, p.last}}
	}
	// follow extends p along its diagonal while the lines are equal and
	// returns the new-text position reached.
	follow := func(p *diffPath, diag int) int {
		newPos, oldPos, n := p.oldPos-diag, p.oldPos, 0
		for newPos+1 < newLen && oldPos+1 < oldLen && a[oldPos+1] == b[newPos+1] {
			newPos, oldPos, n = newPos+1, oldPos+1, n+1
		}
		if n > 0 {
			p.last = &diffComponent{count: n, prev: p.last}
		}
		p.oldPos = oldPos
		return newPos
	}
	build := func(last *diffComponent) []diffPart {
		var comps []*diffComponent
		for c := last; c != nil; c = c.prev {
			comps = append(comps, c)
		}
		var parts []diffPart
		oldPos, newPos := 0, 0
		for i := len(comps) - 1; i >= 0; i-- {
			c := comps[i]
			switch {
			case c.removed:
				parts = append(parts, diffPart{op: '-', lines: a[oldPos : oldPos+c.count]})
				oldPos += c.count
			case c.added:
				parts = append(parts, diffPart{op: '+', lines: b[newPos : newPos+c.count]})
				newPos += c.count
			default:
				parts = append(parts, diffPart{op: ' ', lines: b[newPos : newPos+c.count]})
				newPos += c.count
				oldPos += c.count
			}
		}
		return parts
	}
	start := &diffPath{oldPos: -1}
	if newPos := follow(start, 0); start.oldPos+1 >= oldLen && newPos+1 >= newLen {
		return build(start.last)
	}
	maxEdit := min(oldLen+newLen, myersMaxD)
	off := maxEdit + 1
	best := make([]*diffPath, 2*maxEdit+3)
	best[off] = start
	minDiag, maxDiag := -maxEdit-1, maxEdit+1
	for edit := 1; edit <= maxEdit; edit++ {
		for diag := max(minDiag, -edit); diag <= min(maxDiag, edit); diag += 2 {
			removePath, addPath := best[off+diag-1], best[off+diag+1]
			best[off+diag-1] = nil
			canAdd := false
			if addPath != nil {
				np := addPath.oldPos - diag
				canAdd = 0 <= np && np < newLen
			}
			canRemove := removePath != nil && removePath.oldPos+1 < oldLen
			if !canAdd && !canRemove {
				best[off+diag] = nil
				continue
			}
			var p *diffPath
			if !canRemove || (canAdd && removePath.oldPos < addPath.oldPos) {
				p = step(addPath, true, false, 0)
			} else {
				p = step(removePath, false, true, 1)
			}
			newPos := follow(p, diag)
			if p.oldPos+1 >= oldLen && newPos+1 >= newLen {
				return build(p.last)
			}
			best[off+diag] = p
			if p.oldPos+1 >= oldLen {
				maxDiag = min(maxDiag, diag-1)
			}
			if newPos+1 >= newLen {
				minDiag = max(minDiag, diag+1)
			}
		}
	}
	// Too different to be worth the search: all out, all in.
	var parts []diffPart
	if oldLen > 0 {
		parts = append(parts, diffPart{op: '-', lines: a})
	}
	if newLen > 0 {
		parts = append(parts, diffPart{op: '+', lines: b})
	}
	return parts
}

// generateDiff renders the edit diff the way the reference agent does: each
// shown line is "+N text", "-N text" or " N text" with the line number
// right-aligned to the widest number, unchanged runs cut to 4 lines around
// each change with " ... " markers. It returns the diff and the first
// changed line of the new text (0 when nothing changed).
func generateDiff(oldText, newText string) (string, int) {
	return generateDiffPieces(oldText, []string{newText})
}

// generateDiffPieces is generateDiff for a new text given as pieces.
func generateDiffPieces(oldText string, newText []string) (string, int) {
	return renderDiff(oldText, newText, diffPieces(oldText, newText, true))
}

// renderDiff renders the parts of the diff of oldText and newText (the
// concatenation of its pieces).
func renderDiff(oldText string, newText []string, parts []diffPart) (string, int) {
	newLines := 0
	for _, p := range newText {
		newLines += strings.Count(p, "\n")
	}
	width := len(fmt.Sprint(max(strings.Count(oldText, "\n"), newLines) + 1))
	var out []string
	num := func(n int) string { return fmt.Sprintf("%*d", width, n) }
	ellipsis := " " + strings.Repeat(" ", width) + " ..."
	oldN, newN, first := 1, 1, 0
	lastWasChange := false
	for i, p := range parts {
		if p.op != ' ' {
			if first == 0 {
				first = newN
			}
			for _, l := range p.lines {
				l = strings.TrimSuffix(l, "\n")
				if p.op == '+' {
					out = append(out, "+"+num(newN)+" "+l)
					newN++
				} else {
					out = append(out, "-"+num(oldN)+" "+l)
					oldN++
				}
			}
			lastWasChange = true
			continue
		}
		nextIsChange := i < len(parts)-1 && parts[i+1].op != ' '
		n := p.count()
		context := func(lines []string) {
			for _, l := range lines {
				out = append(out, " "+num(oldN)+" "+strings.TrimSuffix(l, "\n"))
				oldN++
				newN++
			}
		}
		skip := func(n int) {
			out = append(out, ellipsis)
			oldN += n
			newN += n
		}
		switch {
		case lastWasChange && nextIsChange:
			if n <= diffContextLines*2 {
				context(p.lines)
			} else {
				context(p.firstLines(diffContextLines))
				skip(n - 2*diffContextLines)
				context(p.lastLines(diffContextLines))
			}
		case lastWasChange:
			shown := min(diffContextLines, n)
			context(p.firstLines(shown))
			if n > shown {
				skip(n - shown)
			}
		case nextIsChange:
			skipped := max(0, n-diffContextLines)
			if skipped > 0 {
				skip(skipped)
			}
			context(p.lastLines(n - skipped))
		default:
			oldN += n
			newN += n
		}
		lastWasChange = false
	}
	return strings.Join(out, "\n"), first
}
