package sandbox

import (
	"os"
	"path/filepath"
)

// configNames are the protected names whose creation is refused: a .pi
// folder or a pi.toml appearing in the project changes which settings pi
// loads.
var configNames = map[string]bool{".pi": true, "pi.toml": true}

// Guard notes which protected configuration paths (.pi, pi.toml) are
// missing before a command runs; the returned check, called once the
// command is over, removes those the command created and returns the
// lines saying so. A bind mount can only protect what exists, so this is
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
			line := "Sandbox refused: creating " + show(path, home) + " (pi's configuration is protected)"
			if err := os.RemoveAll(path); err != nil {
				line += "; removing it failed: " + err.Error()
			} else {
				line += "; removed"
			}
			lines = append(lines, line)
		}
		return lines
	}
}
