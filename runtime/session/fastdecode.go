package session

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/pi-go/pi/internal/jsonscan"
)

// decodeFast reads a message the way decode's encoding/json path does, for
// the shapes pi and the reference write, without reflection; its strings
// and raw values are not copies but views of b, which must never change
// (a session file's buffer is read once and only read after). ok is false
// for anything it does not read exactly as encoding/json would (invalid
// JSON, a key escaped or in another case, a member given twice, a value of
// another type, null where it matters, invalid UTF-8): decode then takes
// the encoding/json path, which gives the same message or the same error.
// FuzzDecodeFast holds the two paths to the same result.
//
// It reads into m, which must be zero, and leaves it zero when not ok.
// valid says b is known to be valid JSON (b read on this path before:
// its bytes never change), so it is not checked again.
func (m *Message) decodeFast(b []byte, valid bool) (ok bool) {
	if !valid && !json.Valid(b) {
		return false
	}
	if !fastObject(b, messageKeys[:], m.setField) {
		*m = Message{}
		return false
	}
	return true
}

// fastObject walks the members of the object b and calls set with the
// number of each member keys names (its index) and its value; false when
// set refuses one, or a member's key is escaped, matches one of keys only
// in another case, or comes twice (encoding/json's rules there are left to
// it).
func fastObject(b []byte, keys []string, set func(f int, val []byte) bool) bool {
	var seen uint32
	ok := true
	err := jsonscan.Members(b, func(key, val []byte) error {
		f, known := fieldOf(keys, key)
		if !known {
			return nil
		}
		if f < 0 || seen&(1<<f) != 0 || !set(f, val) {
			ok = false
			return errFallback
		}
		seen |= 1 << f
		return nil
	})
	return err == nil && ok
}

// errFallback stops a member walk that decodeFast leaves to encoding/json.
var errFallback = jsonscan.ErrSyntax

// messageKeys are the members of messageJSON, in the order of the field
// numbers setField takes.
var messageKeys = [...]string{
	"role", "content", "timestamp", "api", "provider", "model", "usage",
	"stopReason", "errorMessage", "toolCallId", "toolName", "details",
	"isError", "customType", "display", "command", "output", "exitCode",
	"cancelled", "truncated", "fullOutputPath", "excludeFromContext",
	"summary", "fromId", "tokensBefore",
}

// blockKeys are Block's members, in the order of setBlockField's numbers.
var blockKeys = [...]string{
	"type", "text", "thinking", "thinkingSignature", "redacted", "data",
	"mimeType", "id", "name", "arguments", "thoughtSignature",
}

// fieldOf returns the number of key in keys; known false for a key that
// matches none. A key that matches one only in another case, or that
// holds an escape, counts as known with number -1 (encoding/json would
// match it case-insensitively): the caller falls back.
func fieldOf(keys []string, key []byte) (int, bool) {
	for i, k := range keys {
		if string(key) == k {
			return i, true
		}
	}
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return -1, true
		}
	}
	for _, k := range keys {
		if strings.EqualFold(string(key), k) {
			return -1, true
		}
	}
	return 0, false
}

// setField stores val in the field number f; false when it cannot do so
// as encoding/json would.
func (m *Message) setField(f int, val []byte) bool {
	if val[0] == 'n' { // null: encoding/json leaves the field as it is, except a RawMessage
		if f == 11 {
			m.Details = json.RawMessage(val)
		}
		return true
	}
	var s *string
	switch f {
	case 0:
		s = &m.Role
	case 1:
		return m.setContent(val)
	case 2:
		return setMillis(&m.Timestamp, val)
	case 3:
		s = &m.API
	case 4:
		s = &m.Provider
	case 5:
		s = &m.Model
	case 6:
		if val[0] != '{' {
			return false
		}
		var u Usage
		if !fastObject(val, usageKeys[:], u.setField) {
			return false
		}
		m.Usage = &u
		return true
	case 7:
		s = &m.StopReason
	case 8:
		s = &m.ErrorMessage
	case 9:
		s = &m.ToolCallID
	case 10:
		s = &m.ToolName
	case 11:
		m.Details = json.RawMessage(val)
		return true
	case 12:
		return setBool(&m.IsError, val)
	case 13:
		s = &m.CustomType
	case 14:
		return setBool(&m.Display, val)
	case 15:
		s = &m.Command
	case 16:
		s = &m.Output
	case 17:
		var v int
		if !setInt(&v, val) {
			return false
		}
		m.ExitCode = &v
		return true
	case 18:
		return setBool(&m.Cancelled, val)
	case 19:
		return setBool(&m.Truncated, val)
	case 20:
		s = &m.FullOutputPath
	case 21:
		return setBool(&m.ExcludeFromContext, val)
	case 22:
		s = &m.Summary
	case 23:
		s = &m.FromID
	case 24:
		var t int64
		if !setMillis(&t, val) {
			return false
		}
		m.TokensBefore = int(t)
		return true
	default:
		return false
	}
	return setString(s, val)
}

// setContent reads content that is a string (one text block) or an array
// of block objects.
func (m *Message) setContent(val []byte) bool {
	switch val[0] {
	case '"':
		var text string
		if !setString(&text, val) {
			return false
		}
		m.Content = []Block{{Type: "text", Text: text}}
		return true
	case '[':
	default:
		return false
	}
	blocks := make([]Block, 0, 1)
	i := jsonscan.Space(val, 1)
	if val[i] == ']' {
		m.Content = blocks
		return true
	}
	for {
		end, err := jsonscan.Value(val, i)
		if err != nil || val[i] != '{' {
			return false
		}
		var blk Block
		if !blk.decodeFast(val[i:end]) {
			return false
		}
		blocks = append(blocks, blk)
		i = jsonscan.Space(val, end)
		if val[i] == ']' {
			break
		}
		i = jsonscan.Space(val, i+1) // ','
	}
	m.Content = blocks
	return true
}

// decodeFast reads one content block object (see Message's decodeFast).
func (blk *Block) decodeFast(b []byte) bool {
	return fastObject(b, blockKeys[:], blk.setField)
}

// setField stores val in the block's field number f (blockKeys).
func (blk *Block) setField(f int, val []byte) bool {
	if val[0] == 'n' {
		if f == 9 {
			blk.Arguments = json.RawMessage(val)
		}
		return true
	}
	var s *string
	switch f {
	case 0:
		s = &blk.Type
	case 1:
		s = &blk.Text
	case 2:
		s = &blk.Thinking
	case 3:
		s = &blk.ThinkingSignature
	case 4:
		return setBool(&blk.Redacted, val)
	case 5:
		s = &blk.Data
	case 6:
		s = &blk.MimeType
	case 7:
		s = &blk.ID
	case 8:
		s = &blk.Name
	case 9:
		blk.Arguments = json.RawMessage(val)
		return true
	case 10:
		s = &blk.ThoughtSignature
	default:
		return false
	}
	return setString(s, val)
}

// usageKeys and costKeys are Usage's and UsageCost's members.
var (
	usageKeys = [...]string{"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}
	costKeys  = [...]string{"input", "output", "cacheRead", "cacheWrite", "total"}
)

func (u *Usage) setField(f int, val []byte) bool {
	if val[0] == 'n' {
		return true
	}
	switch f {
	case 0:
		return setInt(&u.Input, val)
	case 1:
		return setInt(&u.Output, val)
	case 2:
		return setInt(&u.CacheRead, val)
	case 3:
		return setInt(&u.CacheWrite, val)
	case 4:
		return setInt(&u.TotalTokens, val)
	case 5:
		return val[0] == '{' && fastObject(val, costKeys[:], u.Cost.setField)
	}
	return false
}

func (c *UsageCost) setField(f int, val []byte) bool {
	if val[0] == 'n' {
		return true
	}
	p := [...]*float64{&c.Input, &c.Output, &c.CacheRead, &c.CacheWrite, &c.Total}
	if f >= len(p) {
		return false
	}
	return setFloat(p[f], val)
}

// setString stores the JSON string val: a view of its bytes when it has
// no escape and is valid UTF-8, else decoded by encoding/json.
func setString(s *string, val []byte) bool {
	if val[0] != '"' {
		return false
	}
	inner := val[1 : len(val)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		if len(inner) == 0 {
			*s = ""
		} else {
			*s = unsafe.String(&inner[0], len(inner))
		}
		return true
	}
	// Through a local: s itself must not escape (the structs it points
	// into stay on the stack).
	var v string
	if json.Unmarshal(val, &v) != nil {
		return false
	}
	*s = v
	return true
}

func setBool(p *bool, val []byte) bool {
	switch string(val) {
	case "true":
		*p = true
	case "false":
		*p = false
	default:
		return false
	}
	return true
}

// setMillis stores the number val as encoding/json does into a float64
// that is then truncated to an integer.
func setMillis(p *int64, val []byte) bool {
	var f float64
	if !setFloat(&f, val) {
		return false
	}
	*p = int64(f)
	return true
}

// setFloat and setInt store the number val as encoding/json does into a
// float64 or an int.
func setFloat(p *float64, val []byte) bool {
	if c := val[0]; c != '-' && (c < '0' || c > '9') {
		return false
	}
	if len(val) <= 15 {
		// Digits only (a timestamp, a token count): an integer below
		// 10^15 is exact as a float64, which is what ParseFloat gives.
		var n int64
		digits := true
		for _, c := range val {
			if c < '0' || c > '9' {
				digits = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if digits {
			*p = float64(n)
			return true
		}
	}
	f, err := strconv.ParseFloat(string(val), 64)
	if err != nil {
		return false
	}
	*p = f
	return true
}

func setInt(p *int, val []byte) bool {
	if c := val[0]; c != '-' && (c < '0' || c > '9') {
		return false
	}
	n, err := strconv.ParseInt(string(val), 10, strconv.IntSize)
	if err != nil {
		return false
	}
	*p = int(n)
	return true
}
