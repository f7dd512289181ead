package output

import (
	"encoding/binary"
	"unicode/utf8"
)

// sanitizer cleans a byte stream for the model, chunk by chunk: ANSI escape
// sequences (CSI, OSC, DCS/SOS/PM/APC strings, two-byte escapes) are removed,
// invalid UTF-8 becomes U+FFFD, NUL and the other C0/C1 control characters
// except tab, newline and carriage return are dropped. It keeps state across
// chunks, so escape sequences and UTF-8 sequences split between two writes
// are handled as if they came in one: the output never depends on how the
// input was cut.
//
// A string sequence (OSC and friends) that never ends is closed at the next
// newline, so a stray `ESC ]` cannot swallow the rest of the output.
type sanitizer struct {
	state escState
	// pend holds the start of a UTF-8 sequence cut by the end of a chunk
	// (at most 3 bytes; always a valid prefix).
	pend [utf8.UTFMax]byte
	npen int
}

type escState uint8

const (
	stGround    escState = iota
	stEsc                // after ESC
	stEscInter           // ESC then intermediate bytes, waiting for the final byte
	stCSI                // ESC [ parameters/intermediates, waiting for the final byte
	stString             // OSC/DCS/SOS/PM/APC body, until BEL or ST
	stStringEsc          // ESC inside a string: ST if `\` follows
)

const replacementChar = "\uFFFD"

// keepASCII marks the ASCII bytes that pass through the ground state as they
// are: printable characters, tab, newline and carriage return.
var keepASCII = func() (t [256]bool) {
	for b := 0x20; b < 0x7f; b++ {
		t[b] = true
	}
	t['\t'], t['\n'], t['\r'] = true, true, true
	return t
}()

// Word-at-a-time test: plainWord is zero exactly when each of the eight
// bytes of w is printable ASCII (0x20-0x7e) or a newline, which pass
// through the ground state as they are (a tab or a carriage return sends
// the word to the byte loop). Each test is exact per byte: the adds work on
// seven-bit bytes, so no carry reaches the next byte, and a newline (in
// every line) or a space after it raises no false alarm.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
	lows  = 0x7f7f7f7f7f7f7f7f
)

func plainWord(w uint64) uint64 {
	low7 := w & lows
	below := ^((low7 + 0x60*ones) | w) & highs // bytes below 0x20
	above := ((low7 + ones) | w) & highs       // bytes at or above 0x7f
	nl := w ^ ('\n' * ones)
	newlines := ^(((nl & lows) + lows) | nl) & highs
	return below&^newlines | above
}

// write appends the cleaned form of p to dst and returns it.
func (s *sanitizer) write(dst, p []byte) []byte {
	// Complete a UTF-8 sequence left over from the previous chunk, one byte
	// at a time, so that whatever the split the decoding is the same.
	for s.npen > 0 && len(p) > 0 {
		s.pend[s.npen] = p[0]
		s.npen++
		p = p[1:]
		if !utf8.FullRune(s.pend[:s.npen]) {
			continue
		}
		seq := s.pend[:s.npen]
		r, size := utf8.DecodeRune(seq)
		var rest [utf8.UTFMax]byte
		n := copy(rest[:], seq[size:])
		s.npen = 0
		if r == utf8.RuneError && size <= 1 {
			dst = append(dst, replacementChar...)
		} else {
			dst = appendRune(dst, r, seq[:size])
		}
		if n > 0 {
			dst = s.process(dst, rest[:n])
		}
	}
	return s.process(dst, p)
}

// plainRun returns how many leading bytes of p the sanitizer would pass
// through unchanged without changing its state (ground state, no cut UTF-8
// sequence, printable ASCII, tab, newline, carriage return). The caller may
// take them as they are and write only the rest.
func (s *sanitizer) plainRun(p []byte) int {
	if s.state != stGround || s.npen != 0 {
		return 0
	}
	return plainASCII(p)
}

// plainASCII is the length of the run of bytes at the start of p that the
// ground state copies as they are (keepASCII), found 32 and 8 bytes a step
// where no byte needs a look.
func plainASCII(p []byte) int {
	j := 0
	for j+32 <= len(p) {
		q := p[j : j+32]
		if plainWord(binary.LittleEndian.Uint64(q))|plainWord(binary.LittleEndian.Uint64(q[8:]))|
			plainWord(binary.LittleEndian.Uint64(q[16:]))|plainWord(binary.LittleEndian.Uint64(q[24:])) != 0 {
			break
		}
		j += 32
	}
	for j < len(p) {
		if j+8 <= len(p) && plainWord(binary.LittleEndian.Uint64(p[j:])) == 0 {
			j += 8
			continue
		}
		if !keepASCII[p[j]] {
			break
		}
		j++
	}
	return j
}

// finish flushes a UTF-8 sequence cut by the end of the stream as one
// U+FFFD and resets the escape state.
func (s *sanitizer) finish(dst []byte) []byte {
	if s.npen > 0 {
		dst = append(dst, replacementChar...)
		s.npen = 0
	}
	s.state = stGround
	return dst
}

// process runs the state machine over p; s.npen is zero on entry.
func (s *sanitizer) process(dst, p []byte) []byte {
	i := 0
	for i < len(p) {
		b := p[i]
		switch s.state {
		case stGround:
			if b < utf8.RuneSelf {
				if keepASCII[b] {
					// Copy the whole run of plain ASCII at once.
					j := i + 1 + plainASCII(p[i+1:])
					dst = append(dst, p[i:j]...)
					i = j
					continue
				}
				if b == 0x1b {
					s.state = stEsc
				}
				i++ // other control characters (NUL, BEL, BS, DEL, ...) are dropped
				continue
			}
			if !utf8.FullRune(p[i:]) {
				s.npen = copy(s.pend[:], p[i:])
				return dst
			}
			r, size := utf8.DecodeRune(p[i:])
			if r == utf8.RuneError && size <= 1 {
				dst = append(dst, replacementChar...)
				i++
				continue
			}
			dst = appendRune(dst, r, p[i:i+size])
			i += size
		case stEsc:
			switch {
			case b == '[':
				s.state = stCSI
			case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
				s.state = stString
			case b >= 0x20 && b <= 0x2f:
				s.state = stEscInter
			case b >= 0x30 && b <= 0x7e:
				s.state = stGround
			case b == 0x1b:
				// ESC ESC: the second one starts over.
			default:
				s.state = stGround
				continue // not an escape after all: reprocess b
			}
			i++
		case stEscInter:
			switch {
			case b >= 0x20 && b <= 0x2f:
			case b >= 0x30 && b <= 0x7e:
				s.state = stGround
			default:
				s.state = stGround
				continue
			}
			i++
		case stCSI:
			switch {
			case b >= 0x20 && b <= 0x3f:
			case b >= 0x40 && b <= 0x7e:
				s.state = stGround
			default:
				s.state = stGround // cancelled; reprocess b
				continue
			}
			i++
		case stString:
			switch b {
			case 0x07:
				s.state = stGround
			case 0x1b:
				s.state = stStringEsc
			case '\n':
				s.state = stGround
				continue // unterminated: keep the newline
			}
			i++
		case stStringEsc:
			if b == '\\' {
				s.state = stGround
				i++
				continue
			}
			s.state = stEsc // the string ended; a new escape begins
		}
	}
	return dst
}

// appendRune appends a decoded non-ASCII rune, given its encoding, unless it
// is a C1 control character.
func appendRune(dst []byte, r rune, enc []byte) []byte {
	if r >= 0x80 && r <= 0x9f {
		return dst
	}
	return append(dst, enc...)
}

// sanitizeOutput returns the cleaned form of a complete output.
func sanitizeOutput(p []byte) string {
	var s sanitizer
	out := s.write(make([]byte, 0, len(p)), p)
	return string(s.finish(out))
}
