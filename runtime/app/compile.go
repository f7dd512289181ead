package app

import (
	"path/filepath"

	"github.com/pi-go/pi/extensions"
)

// CompileProgress is told when loading a module means compiling it (see
// extensions.CompileProgress).
type CompileProgress = extensions.CompileProgress

// lazyDir keeps the extensions' lazy-load records: $PI_HOME/cache/lazy
// ("" without a PI_HOME: every load is eager).
func (r *Runtime) lazyDir() string {
	if r.piHome == "" {
		return ""
	}
	return filepath.Join(r.piHome, "cache", "lazy")
}
