package jsonschema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// decimal is a JSON number kept exactly, as digits × 10^exp: digits has no
// leading or trailing zeros ("" is zero), so equal values have equal
// decimals whatever their literal ("1", "1.0", "10e-1"). Comparisons and
// the integer test never build the number, so a literal like 1e999999999
// costs no more than its length.
type decimal struct {
	neg    bool
	digits string
	exp    int64
	lit    string // the literal, for messages
}

// maxExp bounds exponents; a literal beyond it is far outside every float
// and every comparison still orders it right.
const maxExp = 1 << 40

// parseDecimal reads a JSON number literal (or what fmt prints for a Go
// number). It reports false for anything else.
func parseDecimal(s string) (decimal, bool) {
	d := decimal{lit: s}
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		d.neg = s[i] == '-'
		i++
	}
	var mant strings.Builder
	fracDigits := int64(0)
	seenDigit, seenDot := false, false
	for ; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			seenDigit = true
			if mant.Len() > 0 || c != '0' {
				mant.WriteByte(c)
			}
			if seenDot {
				fracDigits++
			}
			continue
		}
		if c == '.' && !seenDot {
			seenDot = true
			continue
		}
		break
	}
	if !seenDigit {
		return decimal{}, false
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i >= len(s) {
			return decimal{}, false
		}
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return decimal{}, false
			}
			if exp < maxExp {
				exp = exp*10 + int64(c-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return decimal{}, false
	}
	m := mant.String()
	exp -= fracDigits
	t := strings.TrimRight(m, "0")
	exp += int64(len(m) - len(t))
	d.digits = t
	if t == "" {
		d.neg = false
		exp = 0
	}
	d.exp = min(max(exp, -maxExp), maxExp)
	return d, true
}

// toDecimal is parseDecimal of a tree's number value.
func toDecimal(v any) (decimal, bool) {
	switch v := v.(type) {
	case json.Number:
		return parseDecimal(string(v))
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return parseDecimal(fmt.Sprint(v))
	}
	return decimal{}, false
}

func (d decimal) isZero() bool { return d.digits == "" }

// isInteger: no digits after the point once trailing zeros are gone.
func (d decimal) isInteger() bool { return d.isZero() || d.exp >= 0 }

// cmp orders two decimals: -1, 0 or 1.
func (d decimal) cmp(e decimal) int {
	sd, se := d.sign(), e.sign()
	if sd != se {
		if sd < se {
			return -1
		}
		return 1
	}
	if sd == 0 {
		return 0
	}
	c := cmpMagnitude(d, e)
	if sd < 0 {
		return -c
	}
	return c
}

func (d decimal) sign() int {
	switch {
	case d.isZero():
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// cmpMagnitude compares |d| and |e|, both non-zero.
func cmpMagnitude(d, e decimal) int {
	// The position of the leading digit decides first.
	md, me := int64(len(d.digits))+d.exp, int64(len(e.digits))+e.exp
	if md != me {
		if md < me {
			return -1
		}
		return 1
	}
	// Same magnitude: compare the digit strings, the shorter padded
	// with zeros (no trailing zeros, so a longer string is larger).
	n := min(len(d.digits), len(e.digits))
	if c := strings.Compare(d.digits[:n], e.digits[:n]); c != 0 {
		return c
	}
	switch {
	case len(d.digits) < len(e.digits):
		return -1
	case len(d.digits) > len(e.digits):
		return 1
	}
	return 0
}

// multipleOf reports whether d / m is an integer (m non-zero).
func (d decimal) multipleOf(m decimal) bool {
	if d.isZero() {
		return true
	}
	if m.isZero() {
		return false
	}
	k := d.exp - m.exp
	if k < 0 {
		// d's digits end in a non-zero digit, so they cannot be a
		// multiple of m's digits times a power of ten.
		return false
	}
	dv, _ := new(big.Int).SetString(d.digits, 10)
	mv, _ := new(big.Int).SetString(m.digits, 10)
	// (dv × 10^k) mod mv, with the power taken modulo mv.
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(k), mv)
	p.Mul(p, dv)
	return p.Mod(p, mv).Sign() == 0
}

// float64 is the nearest float64, as messages show numbers.
func (d decimal) float64() float64 {
	if d.isZero() {
		return 0
	}
	f, err := strconv.ParseFloat(d.lit, 64)
	if err != nil && f == 0 {
		// Not a literal ParseFloat reads: build it from the parts.
		f, _ = strconv.ParseFloat(d.canonical(), 64)
	}
	return f
}

// canonical is a literal of d that equal values share (the key of
// uniqueItems).
func (d decimal) canonical() string {
	if d.isZero() {
		return "0"
	}
	s := d.digits + "e" + strconv.FormatInt(d.exp, 10)
	if d.neg {
		return "-" + s
	}
	return s
}
