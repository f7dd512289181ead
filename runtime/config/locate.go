package config

import (
	"strconv"
	"strings"
)

// The TOML library reports where syntax errors are but not where a key is
// (its key positions are private and, for arrays of tables, keep only the
// last element's). docIndex is a small second pass over a document that the
// library has already accepted: it records the line of every key, table
// header and array element under its canonical key path, and the byte
// ranges of table headers for RemoveExtension.
//
// Canonical key paths join keys with "." (a key that is not a bare key is
// quoted, as strconv.Quote writes it) and give array elements, including
// the elements of arrays of tables, a 0-based index: `extensions[1].grants.fs`,
// `tools.active[2]`.

// docIndex says where keys are written in one document.
type docIndex struct {
	lines    map[string]int // canonical key path → 1-based line
	headers  []tableHeader  // table headers in document order
	comments map[int]bool   // lines holding only a comment (not in a string)
}

// tableHeader is one `[table]` or `[[array]]` line.
type tableHeader struct {
	path  string // canonical, e.g. "extensions[1].grants"
	array bool   // written as [[...]]
	start int    // byte offset of the start of its line
	line  int    // 1-based
}

// keyLine returns the line of path; for an implicit table (`[a.b]` makes
// `a`, `a.b = 1` too) the first line under it; for a key that is not
// written at all, the line of its nearest written parent; 0 when none is.
func (x *docIndex) keyLine(path string) int {
	if l, ok := x.lines[path]; ok {
		return l
	}
	first := 0
	for p, l := range x.lines {
		if (first == 0 || l < first) && len(p) > len(path) && strings.HasPrefix(p, path) && (p[len(path)] == '.' || p[len(path)] == '[') {
			first = l
		}
	}
	if first > 0 {
		return first
	}
	for path != "" {
		path = parentKey(path)
		if l, ok := x.lines[path]; ok {
			return l
		}
	}
	return 0
}

// parentKey drops the last segment or index of a canonical key path.
func parentKey(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i >= 0 {
			return path[:i]
		}
	}
	// Walk back over the last segment, which may be quoted.
	inQuote := false
	for i := len(path) - 1; i >= 0; i-- {
		switch c := path[i]; {
		case c == '"' && (i == 0 || path[i-1] != '\\'):
			inQuote = !inQuote
		case c == '.' && !inQuote:
			return path[:i]
		}
	}
	return ""
}

// isBareKey reports whether s can be written as a TOML bare key.
func isBareKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// joinKey appends one key segment to a canonical key path.
func joinKey(parent, seg string) string {
	if !isBareKey(seg) {
		seg = strconv.Quote(seg)
	}
	if parent == "" {
		return seg
	}
	return parent + "." + seg
}

// indexKey appends an array index to a canonical key path.
func indexKey(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

// indexDocument scans src, which must be a document the TOML library
// accepted. On other input it returns a partial index; it never panics and
// always ends.
func indexDocument(src []byte) *docIndex {
	s := &scanner{
		src:  src,
		line: 1,
		idx:  &docIndex{lines: map[string]int{}, comments: map[int]bool{}},
		aot:  map[string]int{},
	}
	if len(src) >= 3 && src[0] == 0xef && src[1] == 0xbb && src[2] == 0xbf {
		s.pos = 3 // UTF-8 byte order mark
	}
	s.document()
	return s.idx
}

type scanner struct {
	src   []byte
	pos   int
	line  int
	idx   *docIndex
	aot   map[string]int // canonical path of an array of tables → elements so far
	table string         // canonical path of the current table
}

func (s *scanner) eof() bool { return s.pos >= len(s.src) }

func (s *scanner) peek(off int) byte {
	if s.pos+off < len(s.src) {
		return s.src[s.pos+off]
	}
	return 0
}

// advance moves one byte, counting lines.
func (s *scanner) advance() {
	if s.pos < len(s.src) {
		if s.src[s.pos] == '\n' {
			s.line++
		}
		s.pos++
	}
}

func (s *scanner) skipSpace() {
	for !s.eof() && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
}

// skipToEOL moves to the next newline (not past it).
func (s *scanner) skipToEOL() {
	for !s.eof() && s.src[s.pos] != '\n' {
		s.pos++
	}
}

// skipBlank skips spaces, newlines and comments (inside arrays and inline
// tables).
func (s *scanner) skipBlank() {
	for !s.eof() {
		switch s.src[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.advance()
		case '#':
			s.skipToEOL()
		default:
			return
		}
	}
}

func (s *scanner) document() {
	for !s.eof() {
		before := s.pos
		lineStart := s.pos
		s.skipSpace()
		switch c := s.peek(0); {
		case c == '\n' || c == '\r':
			s.advance()
		case c == '#':
			s.idx.comments[s.line] = true
			s.skipToEOL()
		case c == '[':
			s.header(lineStart)
		default:
			s.keyValue(s.table)
			s.skipSpace()
			if s.peek(0) == '#' {
				s.skipToEOL()
			}
			// Whatever is left on the line (nothing, in a valid document).
			s.skipToEOL()
		}
		if s.pos == before {
			s.advance() // never loop in place on input the library rejected
		}
	}
}

// header reads a `[a.b]` or `[[a.b]]` line.
func (s *scanner) header(lineStart int) {
	line := s.line
	s.pos++ // [
	array := s.peek(0) == '['
	if array {
		s.pos++
	}
	segs := s.key()
	path := ""
	for i, seg := range segs {
		path = joinKey(path, seg)
		last := i == len(segs)-1
		if array && last {
			n := s.aot[path]
			s.aot[path] = n + 1
			path = indexKey(path, n)
			continue
		}
		if n, ok := s.aot[path]; ok && n > 0 {
			path = indexKey(path, n-1)
		}
	}
	s.table = path
	if _, ok := s.idx.lines[path]; !ok {
		s.idx.lines[path] = line
	}
	s.idx.headers = append(s.idx.headers, tableHeader{path: path, array: array, start: lineStart, line: line})
	s.skipToEOL()
}

// key reads a dotted key and returns its segments, unquoted.
func (s *scanner) key() []string {
	var segs []string
	for !s.eof() {
		s.skipSpace()
		var seg string
		switch s.peek(0) {
		case '"':
			seg = s.basicKey()
		case '\'':
			start := s.pos + 1
			s.pos++
			for !s.eof() && s.src[s.pos] != '\'' && s.src[s.pos] != '\n' {
				s.pos++
			}
			seg = string(s.src[start:s.pos])
			if s.peek(0) == '\'' {
				s.pos++
			}
		default:
			start := s.pos
			for !s.eof() && isBareKeyByte(s.src[s.pos]) {
				s.pos++
			}
			seg = string(s.src[start:s.pos])
		}
		segs = append(segs, seg)
		s.skipSpace()
		if s.peek(0) != '.' {
			return segs
		}
		s.pos++
	}
	return segs
}

func isBareKeyByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c >= 0x80
}

// basicKey reads a "quoted" key segment and returns it unescaped.
func (s *scanner) basicKey() string {
	start := s.pos
	s.pos++ // opening quote
	for !s.eof() && s.src[s.pos] != '"' && s.src[s.pos] != '\n' {
		if s.src[s.pos] == '\\' {
			s.pos++
		}
		s.pos++
	}
	if s.pos > len(s.src) {
		s.pos = len(s.src)
	}
	raw := string(s.src[start+1 : s.pos])
	if s.peek(0) == '"' {
		s.pos++
	}
	if u, err := strconv.Unquote(`"` + raw + `"`); err == nil {
		return u
	}
	return raw
}

// keyValue reads `key = value` under table.
func (s *scanner) keyValue(table string) {
	line := s.line
	segs := s.key()
	path := table
	for _, seg := range segs {
		path = joinKey(path, seg)
	}
	s.idx.lines[path] = line
	s.skipSpace()
	if s.peek(0) != '=' {
		return
	}
	s.pos++
	s.skipSpace()
	s.value(path)
}

// value reads one value and records the keys and elements inside it.
func (s *scanner) value(path string) {
	switch s.peek(0) {
	case '"':
		if s.peek(1) == '"' && s.peek(2) == '"' {
			s.multiline('"', true)
		} else {
			s.singleLine('"', true)
		}
	case '\'':
		if s.peek(1) == '\'' && s.peek(2) == '\'' {
			s.multiline('\'', false)
		} else {
			s.singleLine('\'', false)
		}
	case '[':
		s.pos++
		for i := 0; !s.eof(); i++ {
			s.skipBlank()
			if s.peek(0) == ']' {
				break
			}
			before := s.pos
			elem := indexKey(path, i)
			s.idx.lines[elem] = s.line
			s.value(elem)
			s.skipBlank()
			if s.peek(0) == ',' {
				s.pos++
			} else if s.pos == before {
				s.advance()
			}
		}
		if s.peek(0) == ']' {
			s.pos++
		}
	case '{':
		s.pos++
		for !s.eof() {
			s.skipBlank()
			if s.peek(0) == '}' {
				break
			}
			before := s.pos
			s.keyValue(path)
			s.skipBlank()
			if s.peek(0) == ',' {
				s.pos++
			} else if s.pos == before {
				s.advance()
			}
		}
		if s.peek(0) == '}' {
			s.pos++
		}
	default:
		// A number, boolean or date-time (which may hold one space).
		for !s.eof() {
			switch s.src[s.pos] {
			case ',', ']', '}', '\n', '\r', '#':
				return
			}
			s.pos++
		}
	}
}

// singleLine skips a one-line string quoted with q.
func (s *scanner) singleLine(q byte, escapes bool) {
	s.pos++
	for !s.eof() && s.src[s.pos] != q && s.src[s.pos] != '\n' {
		if escapes && s.src[s.pos] == '\\' {
			s.pos++
			if s.eof() || s.src[s.pos] == '\n' {
				continue
			}
		}
		s.pos++
	}
	if s.peek(0) == q {
		s.pos++
	}
}

// multiline skips a string opened by three q.
func (s *scanner) multiline(q byte, escapes bool) {
	s.pos += 3
	for !s.eof() {
		c := s.src[s.pos]
		if escapes && c == '\\' {
			s.advance()
			s.advance()
			continue
		}
		if c == q && s.peek(1) == q && s.peek(2) == q {
			s.pos += 3
			// Up to two more quotes belong to the content.
			for i := 0; i < 2 && s.peek(0) == q; i++ {
				s.pos++
			}
			return
		}
		s.advance()
	}
}
