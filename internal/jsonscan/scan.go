// Package jsonscan reads JSON text by hand, for the decoders of pi's hot
// paths that cannot pay encoding/json's reflection (a streamed answer's
// chunks, the models catalogue). A Scanner checks the text as
// encoding/json's scanner does — strings, escapes, numbers, literals,
// nesting — and reports false for anything that is not JSON; what it
// cannot decode the way encoding/json would (a key in another letter
// case, a key given twice, a key with an escape) it reports false too,
// so that its callers hand such input to encoding/json. Standard library
// only.
package jsonscan

import "unicode/utf8"

// Scanner reads Data from I.
type Scanner struct {
	Data []byte
	I    int
}

// Reset starts reading data.
func (s *Scanner) Reset(data []byte) { s.Data, s.I = data, 0 }

// Space skips JSON white space.
func (s *Scanner) Space() {
	for s.I < len(s.Data) {
		switch s.Data[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// End reports whether only white space is left.
func (s *Scanner) End() bool {
	s.Space()
	return s.I == len(s.Data)
}

// Peek skips space and returns the next byte (0 at the end).
func (s *Scanner) Peek() byte {
	s.Space()
	if s.I < len(s.Data) {
		return s.Data[s.I]
	}
	return 0
}

// Consume skips space, then takes byte b if it is next.
func (s *Scanner) Consume(b byte) bool {
	if s.Peek() == b && s.I < len(s.Data) {
		s.I++
		return true
	}
	return false
}

// Null takes a null literal if one is next (after space).
func (s *Scanner) Null() bool {
	s.Space()
	if len(s.Data)-s.I >= 4 && string(s.Data[s.I:s.I+4]) == "null" {
		s.I += 4
		return true
	}
	return false
}

// Object reads an object, calling member with each key's index among
// keys (at most 64) for the member's value to be read, until member
// returns false; a key that is none of them has its value skipped. A key
// given twice, one with an escape or a byte outside printable ASCII, and
// one that is a known key in other letter case (which encoding/json
// would take for it) fail. A null object is taken and member not called.
func (s *Scanner) Object(keys []string, member func(k int) bool) bool {
	if s.Null() {
		return true
	}
	if !s.Consume('{') {
		return false
	}
	if s.Consume('}') {
		return true
	}
	var seen uint64
	for {
		if !s.Consume('"') {
			return false
		}
		start := s.I
		for s.I < len(s.Data) && s.Data[s.I] != '"' {
			if c := s.Data[s.I]; c < 0x20 || c > 0x7e || c == '\\' {
				return false
			}
			s.I++
		}
		if s.I == len(s.Data) {
			return false
		}
		key := s.Data[start:s.I]
		s.I++
		if !s.Consume(':') {
			return false
		}
		k := -1
		for n, name := range keys {
			if string(key) == name {
				k = n
				break
			}
			if equalFoldASCII(key, name) {
				return false
			}
		}
		if k >= 0 {
			if seen&(1<<k) != 0 {
				return false
			}
			seen |= 1 << k
			if !member(k) {
				return false
			}
		} else if !s.Skip() {
			return false
		}
		if s.Consume(',') {
			continue
		}
		return s.Consume('}')
	}
}

// equalFoldASCII reports whether a and b (ASCII) are equal but for the
// case of their letters.
func equalFoldASCII(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Array reads an array, calling elem for each element until it returns
// false. A null array is taken with isNull set.
func (s *Scanner) Array(elem func() bool) (isNull, ok bool) {
	if s.Null() {
		return true, true
	}
	if !s.Consume('[') {
		return false, false
	}
	if s.Consume(']') {
		return false, true
	}
	for {
		if !elem() {
			return false, false
		}
		if s.Consume(',') {
			continue
		}
		return false, s.Consume(']')
	}
}

// Literal returns the JSON string literal next (quotes included) and
// whether it is plain: no escape and no byte outside ASCII, so that its
// text is the bytes between the quotes. ok is false when what is next is
// not a valid string literal.
func (s *Scanner) Literal() (lit []byte, plain, ok bool) {
	if s.Peek() != '"' {
		return nil, false, false
	}
	start := s.I
	plain = true
	for i := s.I + 1; i < len(s.Data); {
		c := s.Data[i]
		switch {
		case c == '"':
			s.I = i + 1
			return s.Data[start:s.I], plain, true
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			plain = false
			if i+1 >= len(s.Data) {
				return nil, false, false
			}
			switch s.Data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if !hex4(s.Data[i+2:]) {
					return nil, false, false
				}
				i += 6
			default:
				return nil, false, false
			}
		default:
			if c >= utf8.RuneSelf {
				plain = false
			}
			i++
		}
	}
	return nil, false, false
}

// hex4 reports whether b starts with four hex digits.
func hex4(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	for _, c := range b[:4] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// Integer reads a number that is a plain integer of up to 18 digits
// (what encoding/json takes into an int without overflow); any other
// number fails, for encoding/json to decode.
func (s *Scanner) Integer() (n int, ok bool) {
	s.Space()
	i := s.I
	neg := i < len(s.Data) && s.Data[i] == '-'
	if neg {
		i++
	}
	start := i
	for i < len(s.Data) && '0' <= s.Data[i] && s.Data[i] <= '9' {
		n = n*10 + int(s.Data[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 18 || digits > 1 && s.Data[start] == '0' {
		return 0, false
	}
	if i < len(s.Data) {
		switch s.Data[i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	s.I = i
	if neg {
		n = -n
	}
	return n, true
}

// Value skips any JSON value and returns its text (without the space
// around it), checked as encoding/json's scanner checks it.
func (s *Scanner) Value() ([]byte, bool) {
	s.Space()
	start := s.I
	if !s.Skip() {
		return nil, false
	}
	return s.Data[start:s.I], true
}

// Skip takes any JSON value, checking it as encoding/json's scanner does.
func (s *Scanner) Skip() bool { return s.skip(0) }

func (s *Scanner) skip(depth int) bool {
	if depth > 100 {
		return false
	}
	switch c := s.Peek(); {
	case s.I >= len(s.Data):
		return false
	case c == '"':
		_, _, ok := s.Literal()
		return ok
	case c == '{':
		s.I++
		if s.Consume('}') {
			return true
		}
		for {
			if _, _, ok := s.Literal(); !ok || !s.Consume(':') || !s.skip(depth+1) {
				return false
			}
			if s.Consume(',') {
				continue
			}
			return s.Consume('}')
		}
	case c == '[':
		_, ok := s.Array(func() bool { return s.skip(depth + 1) })
		return ok
	case c == '-' || '0' <= c && c <= '9':
		_, ok := s.Number()
		return ok
	}
	for _, lit := range []string{"true", "false", "null"} {
		if len(s.Data)-s.I >= len(lit) && string(s.Data[s.I:s.I+len(lit)]) == lit {
			s.I += len(lit)
			return true
		}
	}
	return false
}

// Number takes a JSON number and returns its text.
func (s *Scanner) Number() ([]byte, bool) {
	s.Space()
	start := s.I
	digits := func() int {
		n := 0
		for s.I < len(s.Data) && '0' <= s.Data[s.I] && s.Data[s.I] <= '9' {
			s.I++
			n++
		}
		return n
	}
	if s.I < len(s.Data) && s.Data[s.I] == '-' {
		s.I++
	}
	if s.I < len(s.Data) && s.Data[s.I] == '0' {
		s.I++
	} else if digits() == 0 {
		return nil, false
	}
	if s.I < len(s.Data) && s.Data[s.I] == '.' {
		s.I++
		if digits() == 0 {
			return nil, false
		}
	}
	if s.I < len(s.Data) && (s.Data[s.I] == 'e' || s.Data[s.I] == 'E') {
		s.I++
		if s.I < len(s.Data) && (s.Data[s.I] == '+' || s.Data[s.I] == '-') {
			s.I++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return s.Data[start:s.I], true
}

// Bool reads true or false.
func (s *Scanner) Bool() (v, ok bool) {
	s.Space()
	switch {
	case len(s.Data)-s.I >= 4 && string(s.Data[s.I:s.I+4]) == "true":
		s.I += 4
		return true, true
	case len(s.Data)-s.I >= 5 && string(s.Data[s.I:s.I+5]) == "false":
		s.I += 5
		return false, true
	}
	return false, false
}
