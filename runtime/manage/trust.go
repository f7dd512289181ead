package manage

import (
	"path/filepath"

	"github.com/pi-go/pi/runtime/config"
)

// TrustedGrant is one fs grant of a trusted project's extension and the
// real folder it points to (config.TrustedGrant).
type TrustedGrant = config.TrustedGrant

// TrustedProgram is one repository file the project's pi.toml makes pi run,
// with its sha256 (config.TrustedProgram).
type TrustedProgram = config.TrustedProgram

// Trusted says what Trust recorded.
type Trusted struct {
	// File is the project's pi.toml ("" when there is none: nothing to
	// trust).
	File string
	// Grants are the fs grants of its extensions and where each points.
	Grants []TrustedGrant
	// Programs are the repository files its settings make pi run, pinned
	// by sha256.
	Programs []TrustedProgram
	// Extensions are the project's extensions, for their http and tools
	// grants.
	Extensions []config.Extension
}

// Trust records the project's pi.toml that applies in scope.Cwd (the
// nearest one up to the project root) as trusted: its folder, its sha256,
// the real folder each fs grant points to and the sha256 of each repository
// program it runs (resolved in the project root and in scope.Cwd), in
// $PI_HOME/trust.json.
//
// # Errors
//
// A pi.toml that does not load, a trust.json that cannot be written.
func Trust(scope Scope) (Trusted, error) {
	cwd, err := config.WorkingDir(scope.Cwd)
	if err != nil {
		return Trusted{}, err
	}
	home := scope.home()
	cfg, err := config.Load(config.LoadOptions{Cwd: cwd, PIHome: home, Trust: true})
	if err != nil || cfg.ProjectFile == "" {
		return Trusted{}, err
	}
	out := Trusted{File: cfg.ProjectFile}
	if err := config.TrustFrom(home, out.File, cwd); err != nil {
		return out, err
	}
	if out.Grants, err = config.TrustGrants(home, out.File); err != nil {
		return out, err
	}
	if out.Programs, err = config.TrustPrograms(home, out.File); err != nil {
		return out, err
	}
	for _, e := range cfg.Extensions {
		if e.Scope == config.ScopeProject {
			out.Extensions = append(out.Extensions, e)
		}
	}
	return out, nil
}

// Untrust forgets the project whose pi.toml applies in scope.Cwd; it
// needs no parse, so it works on a file that is broken. It returns the
// project's folder ("" when there is no pi.toml).
//
// # Errors
//
// A corrupt trust.json or a failed write.
func Untrust(scope Scope) (dir string, err error) {
	cwd, err := config.WorkingDir(scope.Cwd)
	if err != nil {
		return "", err
	}
	home := scope.home()
	file, err := config.FindProjectFile(cwd, home)
	if err != nil || file == "" {
		return "", err
	}
	return filepath.Dir(file), config.Untrust(home, filepath.Dir(file))
}
