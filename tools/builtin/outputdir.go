package builtin

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// DefaultFullOutputMaxBytes caps one full-output file when
// BashOptions.FullOutputMaxBytes is zero: 100 MiB.
const DefaultFullOutputMaxBytes = 100 << 20

// OutputDir is the private folder that holds the bash tool's full-output
// files: one folder per owner (a pi process, or one runtime of a program
// that embeds pi), mode 0700, created on the first file and removed with
// everything in it by Close. Whoever builds the bash definition creates it
// and closes it when done, so two runtimes in one process never remove each
// other's files. It is safe for concurrent use.
type OutputDir struct {
	parent string

	mu     sync.Mutex
	path   string
	closed bool
}

// NewOutputDir returns an OutputDir that will live under parent
// (os.TempDir(), that is $TMPDIR, when empty). Nothing is created until
// the first file is.
func NewOutputDir(parent string) *OutputDir { return &OutputDir{parent: parent} }

// Path returns the folder, or "" when no file was created yet (or after
// Close).
func (d *OutputDir) Path() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.path
}

// errOutputDirClosed is why a file cannot be created after Close.
var errOutputDirClosed = errors.New("the full-output folder was removed (pi is shutting down)")

// create makes a new file PREFIX-<hex>.log in the folder, creating the
// folder (mode 0700) first if needed.
func (d *OutputDir) create(prefix string) (*os.File, string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, "", errOutputDirClosed
	}
	if d.path == "" {
		parent := d.parent
		if parent == "" {
			parent = os.TempDir()
		}
		dir, err := os.MkdirTemp(parent, "pi-"+strconv.Itoa(os.Getpid())+"-*")
		if err != nil {
			return nil, "", fmt.Errorf("create full output folder: %w", err)
		}
		// MkdirTemp asks for 0700; say so whatever the umask did.
		if err := os.Chmod(dir, 0o700); err != nil {
			os.Remove(dir)
			return nil, "", fmt.Errorf("create full output folder: %w", err)
		}
		d.path = dir
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	path := filepath.Join(d.path, prefix+"-"+hex.EncodeToString(id[:])+".log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("create full output file: %w", err)
	}
	return f, path, nil
}

// Close removes the folder and every file in it; later calls of the bash
// tool say their full output was not saved. Closing twice is harmless.
func (d *OutputDir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.path == "" {
		return nil
	}
	dir := d.path
	d.path = ""
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove full output folder: %w", err)
	}
	return nil
}
