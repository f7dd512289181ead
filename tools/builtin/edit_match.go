package builtin

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// editSpec is one replacement the model asked for.
type editSpec struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

const utf8BOM = "\xEF\xBB\xBF"

// lfView is a file's bytes as the matcher sees them: BOM set aside and every
// "\r\n" read as "\n", with what is needed to map an offset in the view back
// to the original bytes.
type lfView struct {
	text  string
	bom   int   // 3 when the original starts with a UTF-8 BOM
	drops []int // view offsets of the '\n's whose '\r' was dropped, ascending
}

// newLFView builds the view of orig; without a "\r\n" it is a substring
// of orig (the file is held once, as a string).
func newLFView(orig string) lfView {
	v := lfView{}
	if strings.HasPrefix(orig, utf8BOM) {
		v.bom = len(utf8BOM)
	}
	body := orig[v.bom:]
	if !strings.Contains(body, "\r\n") {
		v.text = body
		return v
	}
	var b strings.Builder
	b.Grow(len(body))
	for {
		i := strings.Index(body, "\r\n")
		if i < 0 {
			b.WriteString(body)
			break
		}
		b.WriteString(body[:i])
		v.drops = append(v.drops, b.Len())
		b.WriteByte('\n')
		body = body[i+2:]
	}
	v.text = b.String()
	return v
}

// orig maps a view offset to an offset in the original bytes. An offset at
// a '\n' whose '\r' was dropped maps to that '\r'.
func (v lfView) orig(off int) int {
	return v.bom + off + sort.SearchInts(v.drops, off)
}

// matchRegion is where one edit landed, in original byte offsets.
type matchRegion struct {
	edit       int
	start, end int
	newText    string
	tolerant   bool
}

// applyEditsResult is the outcome of applyEdits.
type applyEditsResult struct {
	// out is the new file: the concatenation of its pieces, which are the
	// untouched stretches of the original (substrings of it) and the
	// replacements. It is never joined: the file is written piece by piece
	// and the diff reads the pieces, so an edit of a large file holds the
	// file once, not twice.
	out      []string
	before   string   // LF view of the original, for the diff
	after    []string // LF view of out, in pieces
	tolerant bool     // some edit needed the tolerant match
	regions  []matchRegion
}

// applyEdits locates every edit in the original bytes and replaces only the
// matched regions. Errors carry the model-visible texts of the contract
// (sentences, so they break the usual Go error-string style on purpose).
func applyEdits(orig string, edits []editSpec, path string) (applyEditsResult, error) {
	n := len(edits)
	olds := make([]string, n)
	for i, e := range edits {
		olds[i] = strings.ReplaceAll(e.OldText, "\r\n", "\n")
		if olds[i] == "" {
			if n == 1 {
				return applyEditsResult{}, fmt.Errorf("oldText must not be empty in %s.", path)
			}
			return applyEditsResult{}, fmt.Errorf("edits[%d].oldText must not be empty in %s.", i, path)
		}
	}
	view := newLFView(orig)
	var fz *tolerantText
	regions := make([]matchRegion, 0, n)
	for i, old := range olds {
		start, count := findUnique(view.text, old)
		tolerant := false
		end := start + len(old)
		if count == 0 {
			if fz == nil {
				fz = newTolerantText(view.text)
			}
			if key := tolerantNormalize(old); key != "" {
				var fs int
				fs, count = findUnique(fz.text, key)
				if count == 1 {
					start, end = fz.span(fs, fs+len(key))
					start, end = widenToEdgeSpace(view.text, start, end, old)
					tolerant = true
				}
			}
		}
		switch {
		case count == 0:
			if n == 1 {
				return applyEditsResult{}, fmt.Errorf("Could not find the exact text in %s. The old text must match exactly including all whitespace and newlines.", path)
			}
			return applyEditsResult{}, fmt.Errorf("Could not find edits[%d] in %s. The oldText must match exactly including all whitespace and newlines.", i, path)
		case count > 1:
			if n == 1 {
				return applyEditsResult{}, fmt.Errorf("Found %d occurrences of the text in %s. The text must be unique. Please provide more context to make it unique.", count, path)
			}
			return applyEditsResult{}, fmt.Errorf("Found %d occurrences of edits[%d] in %s. Each oldText must be unique. Please provide more context to make it unique.", count, i, path)
		}
		regions = append(regions, matchRegion{edit: i, start: view.orig(start), end: view.orig(end), newText: edits[i].NewText, tolerant: tolerant})
	}
	sort.SliceStable(regions, func(a, b int) bool { return regions[a].start < regions[b].start })
	for i := 1; i < len(regions); i++ {
		p, c := regions[i-1], regions[i]
		if p.end > c.start {
			return applyEditsResult{}, fmt.Errorf("edits[%d] and edits[%d] overlap in %s. Merge them into one edit or target disjoint regions.", p.edit, c.edit, path)
		}
	}
	fileEnding := detectLineEnding(orig[view.bom:])
	// The new text is pieces: the stretches of orig between the regions
	// (substrings) and the replacements. The file, the view (a substring
	// of it, unless the file has "\r\n") and the replacements are all the
	// edit holds.
	res := applyEditsResult{before: view.text, out: make([]string, 0, 2*len(regions)+1)}
	prev := 0
	for _, r := range regions {
		res.out = append(res.out, orig[prev:r.start], withLineEnding(r.newText, regionLineEnding(orig[r.start:r.end], fileEnding)))
		prev = r.end
		res.tolerant = res.tolerant || r.tolerant
	}
	res.out = append(res.out, orig[prev:])
	if piecesEqual(res.out, orig) {
		if n == 1 {
			return applyEditsResult{}, fmt.Errorf("No changes made to %s. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.", path)
		}
		return applyEditsResult{}, fmt.Errorf("No changes made to %s. The replacements produced identical content.", path)
	}
	res.regions = regions
	res.after = lfPieces(res.out)
	return res, nil
}

// piecesEqual reports whether the concatenation of pieces is s.
func piecesEqual(pieces []string, s string) bool {
	for _, p := range pieces {
		if !strings.HasPrefix(s, p) {
			return false
		}
		s = s[len(p):]
	}
	return s == ""
}

// lfPieces is newLFView(strings.Join(pieces, "")).text without the join:
// a BOM that begins the whole is set aside and every "\r\n" read as "\n",
// a pair split between two pieces included. A piece without a "\r\n"
// stays a substring of itself.
func lfPieces(pieces []string) []string {
	skip := 0
	if piecesHavePrefix(pieces, utf8BOM) {
		skip = len(utf8BOM)
	}
	out := make([]string, 0, len(pieces))
	for _, p := range pieces {
		n := min(skip, len(p))
		skip -= n
		out = appendLF(out, p[n:])
	}
	return out
}

// piecesHavePrefix reports whether the concatenation of pieces begins
// with prefix.
func piecesHavePrefix(pieces []string, prefix string) bool {
	for _, p := range pieces {
		if prefix == "" {
			return true
		}
		n := min(len(p), len(prefix))
		if p[:n] != prefix[:n] {
			return false
		}
		prefix = prefix[n:]
	}
	return prefix == ""
}

// appendLF appends the LF view of piece s to out: its "\r\n"s read as
// "\n", and a '\r' that ends the pieces before it dropped when s begins
// with '\n'.
func appendLF(out []string, s string) []string {
	if s == "" {
		return out
	}
	if s[0] == '\n' {
		for i := len(out) - 1; i >= 0; i-- {
			if out[i] == "" {
				continue
			}
			if strings.HasSuffix(out[i], "\r") {
				out[i] = out[i][:len(out[i])-1]
			}
			break
		}
	}
	if !strings.Contains(s, "\r\n") {
		return append(out, s)
	}
	return append(out, strings.ReplaceAll(s, "\r\n", "\n"))
}

// findUnique returns the first offset of needle in s and how many times it
// occurs, overlapping occurrences included (counting stops at 1000).
func findUnique(s, needle string) (first, count int) {
	first = -1
	from := 0
	for count < 1000 {
		i := strings.Index(s[from:], needle)
		if i < 0 {
			break
		}
		if count == 0 {
			first = from + i
		}
		count++
		_, size := utf8.DecodeRuneInString(s[from+i:])
		from += i + size
		if from > len(s) {
			break
		}
	}
	return first, count
}

// detectLineEnding returns the file's first line ending: "\r\n" or "\n".
func detectLineEnding(b string) string {
	i := strings.IndexByte(b, '\n')
	if i > 0 && b[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// regionLineEnding is the line ending replacement text gets: the one the
// replaced region uses (the first in it), else the file's.
func regionLineEnding(region string, fileEnding string) string {
	if i := strings.IndexByte(region, '\n'); i >= 0 {
		if i > 0 && region[i-1] == '\r' {
			return "\r\n"
		}
		return "\n"
	}
	return fileEnding
}

func withLineEnding(s, ending string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if ending == "\r\n" {
		return strings.ReplaceAll(s, "\n", "\r\n")
	}
	return s
}

// widenToEdgeSpace gives back to a tolerant match the whitespace the
// tolerant form dropped at its two edges, where it is not necessarily at a
// line end in the file: as many whitespace characters after the region as
// oldText's last line ends with ("z " matching in "z   az" takes one space),
// and, when oldText's first line is only whitespace, as many before it.
// Whitespace inside the region is already covered, and line breaks are never
// taken.
func widenToEdgeSpace(text string, start, end int, old string) (int, int) {
	lines := strings.Split(old, "\n")
	edgeSpace := func(line string) (trailing int, all bool) {
		n := mapTolerantRunes(norm.NFKC.String(line))
		trimmed := strings.TrimRightFunc(n, isTrimSpace)
		return utf8.RuneCountInString(n[len(trimmed):]), trimmed == ""
	}
	if k, _ := edgeSpace(lines[len(lines)-1]); k > 0 {
		for ; k > 0 && end < len(text); k-- {
			r, size := utf8.DecodeRuneInString(text[end:])
			if r == '\n' || !isTrimSpace(r) {
				break
			}
			end += size
		}
	}
	if len(lines) > 1 {
		if k, all := edgeSpace(lines[0]); all {
			for ; k > 0 && start > 0; k-- {
				r, size := utf8.DecodeLastRuneInString(text[:start])
				if r == '\n' || !isTrimSpace(r) {
					break
				}
				start -= size
			}
		}
	}
	return start, end
}

// tolerantRune maps the characters the tolerant match reads as ASCII.
func tolerantRune(r rune) (rune, bool) {
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B':
		return '\'', true
	case '\u201C', '\u201D', '\u201E', '\u201F':
		return '"', true
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return '-', true
	case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
		return ' ', true
	}
	return r, false
}

// isTrimSpace is the whitespace trimmed from line ends: JavaScript's
// trimEnd set (tab, vertical tab, form feed, the space separators, the BOM
// and the line terminators), which unlike unicode.IsSpace leaves U+0085.
func isTrimSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', '\uFEFF', '\u2028', '\u2029':
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// tolerantNormalize is the tolerant form of a text: NFKC, trailing
// whitespace of each line removed, smart quotes, Unicode dashes and spaces
// read as ASCII.
func tolerantNormalize(s string) string { return newTolerantText(s).text }

// tolerantText is the tolerant form of a text with a map from its offsets
// back to the source's.
type tolerantText struct {
	text  string
	units []unit // ascending by out

	// scratch for addLine
	pieces []piece
	iter   norm.Iter
}

// piece is a unit of one line before its trailing whitespace is dropped.
type piece struct {
	u   unit
	out string
}

// unit is a piece of the tolerant text: identity units are byte-for-byte
// the source; other units stand for source [in, inEnd) as a whole.
type unit struct {
	out, outEnd int
	in, inEnd   int
	identity    bool
}

func newTolerantText(src string) *tolerantText {
	t := &tolerantText{}
	var b strings.Builder
	b.Grow(len(src))
	lineStart := 0
	for lineStart <= len(src) {
		nl := strings.IndexByte(src[lineStart:], '\n')
		lineEnd := len(src)
		if nl >= 0 {
			lineEnd = lineStart + nl
		}
		t.addLine(&b, src, lineStart, lineEnd)
		if nl < 0 {
			break
		}
		t.push(&b, unit{in: lineEnd, inEnd: lineEnd + 1, identity: true}, "\n")
		lineStart = lineEnd + 1
	}
	t.text = b.String()
	return t
}

func (t *tolerantText) push(b *strings.Builder, u unit, out string) {
	if out == "" {
		return
	}
	u.out = b.Len()
	b.WriteString(out)
	u.outEnd = b.Len()
	// Merge adjacent identity units to keep the map small.
	if k := len(t.units) - 1; u.identity && k >= 0 && t.units[k].identity && t.units[k].inEnd == u.in && t.units[k].outEnd == u.out {
		t.units[k].inEnd, t.units[k].outEnd = u.inEnd, u.outEnd
		return
	}
	t.units = append(t.units, u)
}

// addLine appends the tolerant form of src[start:end] (one line, no '\n').
func (t *tolerantText) addLine(b *strings.Builder, src string, start, end int) {
	if isASCII(src[start:end]) {
		// NFKC and the ASCII mapping leave ASCII as it is: only trim.
		trimmed := strings.TrimRight(src[start:end], " \t\v\f\r")
		t.push(b, unit{in: start, inEnd: start + len(trimmed), identity: true}, trimmed)
		return
	}
	pieces := t.pieces[:0]
	add := func(u unit, out string) {
		// Coalesce contiguous identity pieces (the iterator goes rune by
		// rune on non-ASCII lines).
		if k := len(pieces) - 1; u.identity && k >= 0 && pieces[k].u.identity && pieces[k].u.inEnd == u.in {
			pieces[k].u.inEnd = u.inEnd
			pieces[k].out = src[pieces[k].u.in:u.inEnd]
			return
		}
		pieces = append(pieces, piece{u, out})
	}
	it := &t.iter
	it.InitString(norm.NFKC, src[start:end])
	for !it.Done() {
		segStart := start + it.Pos()
		next := it.Next()
		segEnd := start + it.Pos()
		in := src[segStart:segEnd]
		if string(next) != in {
			seg := string(next)
			add(unit{in: segStart, inEnd: segEnd}, mapTolerantRunes(seg))
			continue
		}
		// Unchanged by NFKC: split at the characters read as ASCII.
		runStart := segStart
		for off, r := range in {
			a, ok := tolerantRune(r)
			if !ok {
				continue
			}
			pos := segStart + off
			if pos > runStart {
				add(unit{in: runStart, inEnd: pos, identity: true}, src[runStart:pos])
			}
			size := utf8.RuneLen(r)
			add(unit{in: pos, inEnd: pos + size}, string(a))
			runStart = pos + size
		}
		if runStart < segEnd {
			add(unit{in: runStart, inEnd: segEnd, identity: true}, src[runStart:segEnd])
		}
	}
	// Drop trailing whitespace of the line (in the normalized form).
	for len(pieces) > 0 {
		p := &pieces[len(pieces)-1]
		trimmed := strings.TrimRightFunc(p.out, isTrimSpace)
		if trimmed == p.out {
			break
		}
		if trimmed == "" {
			pieces = pieces[:len(pieces)-1]
			continue
		}
		if p.u.identity {
			p.u.inEnd = p.u.in + len(trimmed)
		}
		p.out = trimmed
		break
	}
	for _, p := range pieces {
		t.push(b, p.u, p.out)
	}
	t.pieces = pieces[:0]
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func mapTolerantRunes(s string) string {
	return strings.Map(func(r rune) rune { a, _ := tolerantRune(r); return a }, s)
}

// span maps [fs, fe) of the tolerant text to the source, widening to whole
// units where a unit is not the source byte for byte.
func (t *tolerantText) span(fs, fe int) (int, int) {
	k := sort.Search(len(t.units), func(i int) bool { return t.units[i].outEnd > fs })
	u := t.units[k]
	start := u.in
	if u.identity {
		start = u.in + (fs - u.out)
	}
	k = sort.Search(len(t.units), func(i int) bool { return t.units[i].outEnd >= fe })
	u = t.units[k]
	end := u.inEnd
	if u.identity {
		end = u.in + (fe - u.out)
	}
	return start, end
}

// errNoEdits is the contract's text for an empty edits array. Like the
// other texts the model sees, it is a sentence, not a Go-style error string.
var errNoEdits = errors.New("Edit tool input is invalid. edits must contain at least one replacement.")
