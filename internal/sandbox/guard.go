package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pi-go/pi/internal/atomicfile"
)

// configNames are the protected names whose creation is refused: a .pi
// folder or a pi.toml appearing in the project changes which settings pi
// loads.
var configNames = map[string]bool{".pi": true, "pi.toml": true}

// Guard notes which protected configuration paths (.pi, pi.toml) are
// missing before a command runs; the returned check, called once the
// command is over, moves those that appeared aside (NAME.sandbox-refused-ID,
// which pi never reads) and returns the lines saying so. A bind mount can only protect what exists, so this is
// how creating them is refused (after the fact; see docs/sandbox.md).
func (p Policy) Guard(home string) (check func() []string) {
	if !p.Active() || p.Mode == ModeFull {
		return func() []string { return nil }
	}
	var missing []string
	for _, path := range p.Protected {
		if configNames[filepath.Base(path)] {
			if _, err := os.Lstat(path); os.IsNotExist(err) {
				missing = append(missing, path)
			}
		}
	}
	return func() []string {
		var lines []string
		for _, path := range missing {
			if _, err := os.Lstat(path); err != nil {
				continue
			}
			// Moved aside, never deleted: a person may have made it in the
			// meantime, and nothing is lost.
			aside := path + ".sandbox-refused-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			line := "Sandbox refused: creating " + show(path, home) + " (pi's configuration is protected)"
			if err := atomicfile.MoveDir(path, aside); err != nil {
				line += "; moving it aside failed: " + err.Error()
			} else {
				line += "; moved to " + filepath.Base(aside)
			}
			lines = append(lines, line)
		}
		return lines
	}
}
