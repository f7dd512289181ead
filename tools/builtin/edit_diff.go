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

// diffLines is a line diff of a and b (Myers' algorithm on the lines left
// after the common head and tail are set aside), removals before additions
// within a change.
func diffLines(a, b string) []diffPart {
	head := commonLinePrefix(a, b)
	headPart := a[:head]
	a, b = a[head:], b[head:]
	tail := commonLineSuffix(a, b)
	tailPart := a[len(a)-tail:]
	a, b = a[:len(a)-tail], b[:len(b)-tail]
	var parts []diffPart
	add := func(op byte, lines []string) {
		if len(lines) == 0 {
			return
		}
		if k := len(parts) - 1; k >= 0 && parts[k].op == op {
			parts[k].lines = append(parts[k].lines, lines...)
			return
		}
		parts = append(parts, diffPart{op: op, lines: lines})
	}
	add(' ', splitLineTokens(headPart))
	for _, p := range myers(splitLineTokens(a), splitLineTokens(b)) {
		add(p.op, p.lines)
	}
	add(' ', splitLineTokens(tailPart))
	return parts
}

// commonLinePrefix is the length of the longest common prefix of a and b
// that ends at a line end.
func commonLinePrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return i
	}
	return strings.LastIndexByte(a[:i], '\n') + 1
}

// commonLineSuffix is the length of the longest common suffix of a and b
// made of whole lines.
func commonLineSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	if i == 0 {
		return 0
	}
	// The suffix must start at a line start in both texts.
	for i > 0 {
		sa, sb := len(a)-i, len(b)-i
		if (sa == 0 || a[sa-1] == '\n') && (sb == 0 || b[sb-1] == '\n') {
			return i
		}
		i--
	}
	return 0
}

// myersMaxD bounds the edit distance the diff searches (memory grows with
// its square); beyond it the changed middle is shown as removed then added.
const myersMaxD = 1000

// myers diffs two line lists.
func myers(a, b []string) []diffPart {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return nil
	}
	if n == 0 {
		return []diffPart{{'+', b}}
	}
	if m == 0 {
		return []diffPart{{'-', a}}
	}
	maxD := n + m
	v := make([]int, 2*maxD+2)
	off := maxD
	// trace[d] keeps v[-d..d] as it was before step d.
	var trace [][]int
	d := 0
	found := false
	for ; d <= maxD && d <= myersMaxD; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		// Too different to be worth the search: all out, all in.
		return []diffPart{{'-', a}, {'+', b}}
	}
	// Walk back through the trace to collect the edit script.
	type step struct {
		op   byte
		line string
	}
	var rev []step
	x, y := n, m
	for d > 0 {
		vp := trace[d] // v as step d began, for k in [-d, d]
		at := func(k int) int { return vp[k+d] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, step{' ', a[x]})
		}
		if x == px {
			y--
			rev = append(rev, step{'+', b[y]})
		} else {
			x--
			rev = append(rev, step{'-', a[x]})
		}
		d--
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, step{' ', a[x]})
	}
	// Forward order; within each change, removals before additions.
	var parts []diffPart
	var del, ins []string
	flush := func() {
		if len(del) > 0 {
			parts = append(parts, diffPart{'-', del})
		}
		if len(ins) > 0 {
			parts = append(parts, diffPart{'+', ins})
		}
		del, ins = nil, nil
	}
	for i := len(rev) - 1; i >= 0; i-- {
		s := rev[i]
		switch s.op {
		case '-':
			del = append(del, s.line)
		case '+':
			ins = append(ins, s.line)
		default:
			flush()
			if k := len(parts) - 1; k >= 0 && parts[k].op == ' ' {
				parts[k].lines = append(parts[k].lines, s.line)
			} else {
				parts = append(parts, diffPart{' ', []string{s.line}})
			}
		}
	}
	flush()
	return parts
}

// generateDiff renders the edit diff the way the reference agent does: each
// shown line is "+N text", "-N text" or " N text" with the line number
// right-aligned to the widest number, unchanged runs cut to 4 lines around
// each change with " ... " markers. It returns the diff and the first
// changed line of the new text (0 when nothing changed).
func generateDiff(oldText, newText string) (string, int) {
	parts := diffLines(oldText, newText)
	width := len(fmt.Sprint(max(strings.Count(oldText, "\n"), strings.Count(newText, "\n")) + 1))
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
		raw := p.lines
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
			if len(raw) <= diffContextLines*2 {
				context(raw)
			} else {
				context(raw[:diffContextLines])
				skip(len(raw) - 2*diffContextLines)
				context(raw[len(raw)-diffContextLines:])
			}
		case lastWasChange:
			shown := raw[:min(diffContextLines, len(raw))]
			context(shown)
			if len(raw) > len(shown) {
				skip(len(raw) - len(shown))
			}
		case nextIsChange:
			skipped := max(0, len(raw)-diffContextLines)
			if skipped > 0 {
				skip(skipped)
			}
			context(raw[skipped:])
		default:
			oldN += len(raw)
			newN += len(raw)
		}
		lastWasChange = false
	}
	return strings.Join(out, "\n"), first
}
