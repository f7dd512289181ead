package tool

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// parseTree parses JSON the way the schema library's UnmarshalJSON does (a
// json.Decoder with UseNumber decoding into any: objects as
// map[string]any, arrays as []any, numbers as json.Number, then nothing
// but white space) in one pass over data and without copying it first:
// each string is copied once, from data into the tree. It reports false
// for invalid input, duplicate keys and nesting deeper than encoding/json
// allows; the caller then falls back to the library's decoder, so every
// error text stays exactly the library's.
func parseTree(data []byte) (any, bool) {
	p := treeParser{data: data}
	p.skipSpace()
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.skipSpace()
	if p.i != len(p.data) {
		return nil, false
	}
	return v, true
}

// maxTreeDepth is encoding/json's nesting limit; deeper input goes to the
// library's decoder for its error.
const maxTreeDepth = 10000

type treeParser struct {
	data []byte
	i    int
}

func (p *treeParser) skipSpace() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *treeParser) value(depth int) (any, bool) {
	if p.i >= len(p.data) {
		return nil, false
	}
	switch c := p.data[p.i]; {
	case c == '"':
		return p.str()
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, false
}

func (p *treeParser) literal(word string) bool {
	if len(p.data)-p.i < len(word) || string(p.data[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

func (p *treeParser) object(depth int) (any, bool) {
	if depth > maxTreeDepth {
		return nil, false
	}
	p.i++ // {
	m := map[string]any{}
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, false
		}
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.skipSpace()
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		if _, dup := m[key]; dup {
			// encoding/json keeps the last, but a struct decode sees
			// both: leave such input to the library on every path.
			return nil, false
		}
		m[key] = v
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, false
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (p *treeParser) array(depth int) (any, bool) {
	if depth > maxTreeDepth {
		return nil, false
	}
	p.i++ // [
	a := []any{}
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		p.skipSpace()
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, false
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// number checks JSON's number grammar and keeps the literal, as UseNumber
// does.
func (p *treeParser) number() (any, bool) {
	d, start := p.data, p.i
	i := p.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	p.i = i
	return json.Number(d[start:i]), true
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special reports whether any byte of the 8 in v is a quote, a backslash
// or a control character (the bytes a JSON string cannot hold as they
// are). Bytes of 0x80 and above are never flagged.
func special(v uint64) bool {
	q := v ^ (lsb * '"')
	b := v ^ (lsb * '\\')
	return ((q-lsb)&^q|(b-lsb)&^b|(v-lsb*0x20)&^v)&msb != 0
}

// str reads a string at p.i (on its quote). One pass, eight bytes at a
// time, finds its end and whether it has escapes or bytes above ASCII; a
// plain string is then copied straight out of data, any other decoded as
// encoding/json decodes it (escapes, surrogate pairs, U+FFFD for invalid
// UTF-8 and lone surrogates).
func (p *treeParser) str() (string, bool) {
	d := p.data
	start := p.i + 1
	i := start
	var high uint64
	escaped := false
	for {
		for i+8 <= len(d) {
			v := binary.LittleEndian.Uint64(d[i:])
			if special(v) {
				break
			}
			high |= v
			i += 8
		}
		if i >= len(d) {
			return "", false
		}
		c := d[i]
		switch {
		case c == '"':
			s := d[start:i]
			p.i = i + 1
			if !escaped && (high&msb == 0 || utf8.Valid(s)) {
				return string(s), true
			}
			return unquote(s)
		case c == '\\':
			escaped = true
			i += 2 // the escaped byte is checked by unquote
		case c < 0x20:
			return "", false
		default:
			high |= uint64(c) << 56
			i++
		}
	}
}

// unquote decodes the inside of a JSON string as encoding/json does.
func unquote(s []byte) (string, bool) {
	var b strings.Builder
	b.Grow(len(s))
	run := 0
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			b.Write(s[run:r])
			if r+1 >= len(s) {
				return "", false
			}
			switch e := s[r+1]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				rr := hex4(s[r+2:])
				if rr < 0 {
					return "", false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if r+1 < len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:])); dec != unicode.ReplacementChar {
							r += 6
							b.WriteRune(dec)
							run = r
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				b.WriteRune(rr)
				run = r
				continue
			default:
				return "", false
			}
			r += 2
			run = r
		case c < 0x20 || c == '"':
			return "", false
		case c < utf8.RuneSelf:
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			if rr == utf8.RuneError && size == 1 {
				b.Write(s[run:r])
				b.WriteRune(utf8.RuneError)
				run = r + 1
			}
			r += size
		}
	}
	b.Write(s[run:])
	return b.String(), true
}

// hex4 reads four hex digits (a \u escape's), or returns -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
