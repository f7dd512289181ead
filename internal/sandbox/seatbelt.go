package sandbox

import (
	"strconv"
	"strings"
)

// seatbeltDevices are the files every command may write under macOS's
// sandbox, whatever the mode (the Seatbelt counterpart of devices).
var seatbeltDevices = []string{"/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper", "/dev/stdout", "/dev/stderr"}

// SeatbeltProfile is p as a macOS Seatbelt profile for
// `sandbox-exec -p PROFILE`: everything allowed but what p forbids —
// writing outside the writable roots (every write in read-only), writing
// the protected paths (a missing one included: Seatbelt can deny a name
// that does not exist yet), and with the network off every network
// operation. Paths must be real paths (macOS's /tmp is /private/tmp);
// the caller resolves them. The text is unit-tested; it has not been run
// on a Mac by pi's tests (docs/sandbox.md).
func (p Policy) SeatbeltProfile() string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n")
	if p.Mode == ModeWorkspaceWrite || p.Mode == ModeReadOnly {
		b.WriteString("(deny file-write*\n  (require-all\n")
		if p.Mode == ModeWorkspaceWrite {
			for _, w := range p.Writable {
				b.WriteString("    (require-not (subpath " + sbString(w) + "))\n")
			}
		}
		for _, d := range seatbeltDevices {
			b.WriteString("    (require-not (literal " + sbString(d) + "))\n")
		}
		b.WriteString("    (require-not (regex #\"^/dev/ttys[0-9]+$\"))))\n")
		if p.Mode == ModeWorkspaceWrite && len(p.Protected) > 0 {
			b.WriteString("(deny file-write*\n")
			for _, pr := range p.Protected {
				b.WriteString("  (literal " + sbString(pr) + ") (subpath " + sbString(pr) + ")\n")
			}
			b.WriteString(")\n")
		}
	}
	if p.Network == NetworkOff {
		b.WriteString("(deny network*)\n")
	}
	b.WriteString("(deny signal (target others))\n")
	return b.String()
}

// sbString quotes s as a Seatbelt (TinyScheme) string.
func sbString(s string) string { return strconv.Quote(s) }
