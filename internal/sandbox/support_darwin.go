//go:build darwin

package sandbox

import "os"

// Support is what the system offers the sandbox.
type Support struct {
	LandlockABI int
	UserNS      bool
	Missing     string
}

// Probe reports whether macOS's sandbox-exec is there.
func Probe() Support {
	if _, err := os.Stat(SeatbeltExec); err != nil {
		return Support{Missing: "macOS's " + SeatbeltExec + " is missing"}
	}
	return Support{}
}

// Guard is not needed on macOS: Seatbelt refuses creating a protected
// path that does not exist yet.
