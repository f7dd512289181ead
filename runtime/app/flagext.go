package app

import (
	"fmt"
	"path/filepath"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/config"
)

// ExtensionFlag is one extension loaded for a single run from the command
// line (`-e FILE.wasm --grant fs=ro:. --ext-config n=3`), with the grants
// and config given for it there. Nothing is written to pi.toml and the
// file's sha256 is not checked: the person running the command chose the
// file and its grants for this run.
type ExtensionFlag struct {
	// Path is the .wasm file (relative to the process's directory).
	Path   string
	Grants config.Grants
	// Config is sent to the extension's init as its [extensions.config];
	// nil for none.
	Config map[string]any
}

// appendFlagSpecs adds the load specs of flags to specs.
func appendFlagSpecs(specs []extensions.Spec, flags []ExtensionFlag) ([]extensions.Spec, error) {
	for _, f := range flags {
		path, err := filepath.Abs(f.Path)
		if err != nil {
			return nil, fmt.Errorf("extension %s: %w", f.Path, err)
		}
		specs = append(specs, extensions.Spec{Path: path, Scope: "flag", Grants: f.Grants, Config: f.Config})
	}
	return specs, nil
}
