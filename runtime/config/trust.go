package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pi-go/pi/internal/atomicfile"
)

// TrustFileName is the trust store's name inside PI_HOME.
const TrustFileName = "trust.json"

// trustStore is trust.json: the trusted project folders (absolute, symlinks
// resolved) with the sha256 of the pi.toml that was trusted.
type trustStore struct {
	Version  int                   `json:"version"`
	Projects map[string]trustEntry `json:"projects"`
}

type trustEntry struct {
	File      string    `json:"file"`
	SHA256    string    `json:"sha256"`
	TrustedAt time.Time `json:"trustedAt"`
}

const trustStoreVersion = 1

type trustState int

const (
	untrusted    trustState = iota
	trustChanged            // trusted once, but the file changed since
	trusted
)

// Trust records projectFile's folder and the sha256 of its current content
// in $piHome/trust.json, keeping the other entries. Later Loads apply that
// file's tools.bash and [[extensions]] settings until its content changes.
//
// # Errors
//
// An empty piHome, a projectFile that cannot be read, a corrupt trust.json,
// or a failed write (trust.json is replaced atomically, never half written).
func Trust(piHome, projectFile string) error {
	if piHome == "" {
		return errors.New("trust project: no PI_HOME")
	}
	file, err := filepath.Abs(projectFile)
	if err != nil {
		return fmt.Errorf("trust project %s: %w", projectFile, err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("trust project %s: %w", file, err)
	}
	dir := canonicalDir(filepath.Dir(file))
	err = updateTrustStore(piHome, func(store *trustStore) bool {
		store.Projects[dir] = trustEntry{File: file, SHA256: digest(data), TrustedAt: time.Now().UTC().Truncate(time.Second)}
		return true
	})
	if err != nil {
		return fmt.Errorf("trust project %s: %w", file, err)
	}
	return nil
}

// Untrust removes projectDir from $piHome/trust.json, keeping the other
// entries. Untrusting a folder that is not trusted does nothing.
//
// # Errors
//
// A corrupt trust.json or a failed write.
func Untrust(piHome, projectDir string) error {
	if piHome == "" {
		return errors.New("untrust project: no PI_HOME")
	}
	abs, err := filepath.Abs(projectDir)
	if err != nil {
		return fmt.Errorf("untrust project %s: %w", projectDir, err)
	}
	dir := canonicalDir(abs)
	store, err := readTrustStore(piHome)
	if err != nil {
		return fmt.Errorf("untrust project %s: %w", abs, err)
	}
	if _, ok := store.Projects[dir]; !ok {
		return nil // nothing to do, and nothing to create
	}
	err = updateTrustStore(piHome, func(store *trustStore) bool {
		_, ok := store.Projects[dir]
		delete(store.Projects, dir)
		return ok
	})
	if err != nil {
		return fmt.Errorf("untrust project %s: %w", abs, err)
	}
	return nil
}

// IsTrusted reports whether projectFile's folder is in $piHome/trust.json
// with the sha256 of projectFile's current content.
//
// # Errors
//
// A projectFile that cannot be read or a corrupt trust.json.
func IsTrusted(piHome, projectFile string) (bool, error) {
	file, err := filepath.Abs(projectFile)
	if err != nil {
		return false, fmt.Errorf("check trust %s: %w", projectFile, err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return false, fmt.Errorf("check trust %s: %w", file, err)
	}
	st, err := trustStatus(piHome, file, data)
	if err != nil {
		return false, fmt.Errorf("check trust %s: %w", file, err)
	}
	return st == trusted, nil
}

// trustStatus checks the content data of the absolute path file.
func trustStatus(piHome, file string, data []byte) (trustState, error) {
	if piHome == "" {
		return untrusted, nil
	}
	store, err := readTrustStore(piHome)
	if err != nil {
		return untrusted, err
	}
	e, ok := store.Projects[canonicalDir(filepath.Dir(file))]
	switch {
	case !ok:
		return untrusted, nil
	case e.SHA256 != digest(data) && filepath.Base(e.File) != filepath.Base(file):
		return untrusted, nil // another file of that folder was trusted
	case e.SHA256 != digest(data):
		return trustChanged, nil
	}
	return trusted, nil
}

// canonicalDir resolves symlinks so that one folder has one entry however
// it is reached; an absolute dir that cannot be resolved is kept as is.
func canonicalDir(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return filepath.Clean(dir)
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// readTrustStore reads $piHome/trust.json strictly; a missing file is an
// empty store.
func readTrustStore(piHome string) (*trustStore, error) {
	file := filepath.Join(piHome, TrustFileName)
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return &trustStore{Version: trustStoreVersion, Projects: map[string]trustEntry{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read trust store %s: %w", file, err)
	}
	var store trustStore
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&store); err != nil {
		return nil, fmt.Errorf("read trust store %s: corrupt (fix or delete it): %w", file, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("read trust store %s: corrupt (fix or delete it): data after the JSON object", file)
	}
	if store.Version != trustStoreVersion {
		return nil, fmt.Errorf("read trust store %s: version %d, want %d", file, store.Version, trustStoreVersion)
	}
	if store.Projects == nil {
		store.Projects = map[string]trustEntry{}
	}
	return &store, nil
}

// Trust store lock: a file created exclusively next to trust.json, so that
// two pi processes changing trust at once do not lose an entry.
var (
	trustLockWait  = 5 * time.Second  // give up after
	trustLockStale = 30 * time.Second // a lock this old was left by a crash
)

// updateTrustStore reads trust.json under the lock, lets change edit it and
// writes it back (atomically) when change reports a change.
func updateTrustStore(piHome string, change func(*trustStore) bool) error {
	if err := os.MkdirAll(piHome, 0o700); err != nil {
		return fmt.Errorf("write trust store: %w", err)
	}
	unlock, err := lockTrustStore(piHome)
	if err != nil {
		return err
	}
	defer unlock()
	store, err := readTrustStore(piHome)
	if err != nil {
		return err
	}
	if !change(store) {
		return nil
	}
	data, err := json.MarshalIndent(store, "", "  ")
	if err != nil {
		return fmt.Errorf("write trust store: %w", err)
	}
	return atomicfile.WriteFile(filepath.Join(piHome, TrustFileName), append(data, '\n'), 0o600)
}

// lockTrustStore takes $piHome/trust.json.lock, waiting for another holder
// and breaking a stale lock.
func lockTrustStore(piHome string) (unlock func(), err error) {
	lock := filepath.Join(piHome, TrustFileName+".lock")
	deadline := time.Now().Add(trustLockWait)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(lock) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lock trust store: %w", err)
		}
		if info, err := os.Stat(lock); err == nil && time.Since(info.ModTime()) > trustLockStale {
			os.Remove(lock)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock trust store: %s is held by another pi (delete it if no pi is running)", lock)
		}
		time.Sleep(wait)
	}
}
