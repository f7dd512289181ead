package manage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pi-go/pi/runtime/config"
)

// Scope says which pi.toml a transaction edits or lists.
type Scope struct {
	// Cwd is where the project's pi.toml is searched from ("" for the
	// process's working directory).
	Cwd string
	// PIHome is "" for config.DefaultPIHome().
	PIHome string
	// Global edits $PI_HOME/pi.toml instead of the project's.
	Global bool
}

// The scopes of an entry: which file names it.
const (
	ScopeGlobal  = config.ScopeGlobal
	ScopeProject = config.ScopeProject
)

// tomlFile is one pi.toml an edit writes: its path, its scope, and the
// PI_HOME whose trust.json records the project's trust.
type tomlFile struct {
	home, path, scope string
}

// target is where a transaction writes: the pi.toml and the folder the
// .wasm files go to.
type target struct {
	tomlFile
	cwd, dir string
}

func (s Scope) home() string {
	if s.PIHome != "" {
		return s.PIHome
	}
	return config.DefaultPIHome()
}

func (s Scope) target() (target, error) {
	cwd, err := config.WorkingDir(s.Cwd)
	if err != nil {
		return target{}, err
	}
	home := s.home()
	if s.Global {
		return target{tomlFile: tomlFile{home: home, path: filepath.Join(home, config.FileName), scope: config.ScopeGlobal}, cwd: cwd, dir: filepath.Join(home, "extensions")}, nil
	}
	// The folder of the project's pi.toml, else the project root (the
	// nearest folder with .git or .pi/), else cwd: where a later load finds
	// the file again.
	cfg, err := config.Load(config.LoadOptions{Cwd: cwd, PIHome: home, Trust: true})
	if err != nil {
		return target{}, err
	}
	root := cfg.ProjectRoot
	return target{tomlFile: tomlFile{home: home, path: filepath.Join(root, config.FileName), scope: config.ScopeProject}, cwd: cwd, dir: filepath.Join(root, ".pi", "extensions")}, nil
}

// editKeepingTrust is the one way pi edits a pi.toml for the user: it
// runs edit (which writes the file atomically, or fails having written
// nothing) and keeps the project's trust as it was. A trusted project, or
// one whose pi.toml does not exist yet (the user is creating it), is
// trusted again for the bytes the edit wrote; an untrusted one stays
// untrusted; the global file needs no trust. When the project's trust
// cannot be read (a trust.json or pi.toml that is unsafe or corrupt), the
// edit is refused before anything is written. An edit that leaves no file
// (a removal that emptied it) records nothing.
//
// written says edit succeeded; trusted that the project's trust was
// recorded again. done names what was done in the error when recording
// trust fails after the edit ("installed, but recording trust failed";
// "" for "recording trust failed").
func editKeepingTrust(f tomlFile, done string, edit func() error) (trusted, written bool, err error) {
	was := false
	if f.scope == config.ScopeProject {
		if _, err := os.Stat(f.path); errors.Is(err, os.ErrNotExist) {
			was = true
		} else if was, err = config.IsTrusted(f.home, f.path); err != nil {
			return false, false, err
		}
	}
	if err := edit(); err != nil {
		return false, false, err
	}
	if !was {
		return false, true, nil
	}
	if _, err := os.Stat(f.path); err != nil {
		return false, true, nil
	}
	if err := config.Trust(f.home, f.path); err != nil {
		msg := "recording trust failed"
		if done != "" {
			msg = done + ", but " + msg
		}
		return false, true, fmt.Errorf("%s: %w", msg, err)
	}
	return true, true, nil
}
