package session

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"
)

// NewSessionID returns a new UUID version 7 (RFC 9562): 48 bits of Unix
// milliseconds, then random bits, in the canonical 8-4-4-4-12 form. Session
// ids sort by creation time.
func NewSessionID() string {
	return uuidV7(time.Now())
}

func uuidV7(t time.Time) string {
	var b [16]byte
	if _, err := rand.Read(b[6:]); err != nil {
		panic(fmt.Sprintf("session: crypto/rand: %v", err)) // never fails on supported systems
	}
	ms := uint64(t.UnixMilli())
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], ms)
	copy(b[0:6], ts[2:8])
	b[6] = 0x70 | (b[6] & 0x0f) // version 7
	b[8] = 0x80 | (b[8] & 0x3f) // variant 10
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// MaxSessionIDLen is the longest session id CheckSessionID accepts: the
// file name TIMESTAMP_ID.jsonl then stays within the 255 bytes file
// systems allow.
const MaxSessionIDLen = 200

// CheckSessionID says whether id can be a session id chosen by the caller
// (CreateOptions.ID): it names the session's file, so it must not be
// empty, "." or "..", longer than MaxSessionIDLen bytes, or hold a path
// separator ('/' or a backslash), a control character or invalid UTF-8.
func CheckSessionID(id string) error {
	switch {
	case id == "":
		return errors.New("session id is empty")
	case id == "." || id == "..":
		return fmt.Errorf("session id %q is not a file name", id)
	case len(id) > MaxSessionIDLen:
		return fmt.Errorf("session id is %d bytes long, more than %d", len(id), MaxSessionIDLen)
	case !utf8.ValidString(id):
		return fmt.Errorf("session id %q is not valid UTF-8", id)
	}
	for _, r := range id {
		if r == '/' || r == '\\' || unicode.IsControl(r) {
			return fmt.Errorf("session id %q holds %q: it names the session's file", id, r)
		}
	}
	return nil
}

// newEntryID returns 8 random hex digits that taken does not report as
// used (the reference's entry ids); after 100 collisions, a whole UUID.
func newEntryID(taken func(string) bool) string {
	for range 100 {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic(fmt.Sprintf("session: crypto/rand: %v", err))
		}
		id := hex.EncodeToString(b[:])
		if !taken(id) {
			return id
		}
	}
	return uuidV7(time.Now())
}

// isoTime formats t as the reference's entry timestamps:
// 2006-01-02T15:04:05.000Z, in UTC.
func isoTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// fileTimestamp is the ISO timestamp with ':' and '.' turned into '-', as
// in the reference's file names.
func fileTimestamp(iso string) string {
	out := []byte(iso)
	for i, c := range out {
		if c == ':' || c == '.' {
			out[i] = '-'
		}
	}
	return string(out)
}
