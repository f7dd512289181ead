package sandbox

import (
	"strings"
	"testing"
)

// TestSeatbeltProfile: the macOS profile says, in Seatbelt's language,
// what the policy says (golden text; not run on a Mac here).
func TestSeatbeltProfile(t *testing.T) {
	p := Policy{Mode: ModeWorkspaceWrite, Network: NetworkOff,
		Writable:  []string{"/Users/me/proj", "/private/tmp"},
		Protected: []string{"/Users/me/proj/.git", "/Users/me/proj/pi.toml"}}
	want := `(version 1)
(allow default)
(deny file-write*
  (require-all
    (require-not (subpath "/Users/me/proj"))
    (require-not (subpath "/private/tmp"))
    (require-not (literal "/dev/null"))
    (require-not (literal "/dev/zero"))
    (require-not (literal "/dev/tty"))
    (require-not (literal "/dev/dtracehelper"))
    (require-not (literal "/dev/stdout"))
    (require-not (literal "/dev/stderr"))
    (require-not (regex #"^/dev/ttys[0-9]+$"))))
(deny file-write*
  (literal "/Users/me/proj/.git") (subpath "/Users/me/proj/.git")
  (literal "/Users/me/proj/pi.toml") (subpath "/Users/me/proj/pi.toml")
)
(deny network*)
(deny signal (target others))
`
	if got := p.SeatbeltProfile(); got != want {
		t.Errorf("profile:\n%s\nwant:\n%s", got, want)
	}
	ro := Policy{Mode: ModeReadOnly, Network: NetworkOn, Writable: []string{"/Users/me/proj"}}.SeatbeltProfile()
	if strings.Contains(ro, "/Users/me/proj") || strings.Contains(ro, "network") || !strings.Contains(ro, "(deny file-write*") {
		t.Errorf("read-only profile:\n%s", ro)
	}
	full := Policy{Mode: ModeFull, Network: NetworkOff}.SeatbeltProfile()
	if strings.Contains(full, "file-write") || !strings.Contains(full, "(deny network*)") {
		t.Errorf("full profile:\n%s", full)
	}
	if q := sbString(`/a "b"\c`); q != `"/a \"b\"\\c"` {
		t.Errorf("quoted %s", q)
	}
}
