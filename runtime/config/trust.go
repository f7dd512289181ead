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
	"slices"
	"time"

	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/runtime/extspec"
)

// TrustFileName is the trust store's name inside PI_HOME.
const TrustFileName = "trust.json"

// trustStore is trust.json: the trusted project folders (absolute, symlinks
// resolved) with the sha256 of the pi.toml that was trusted and where its
// extensions' fs grants pointed.
type trustStore struct {
	Version  int                   `json:"version"`
	Projects map[string]trustEntry `json:"projects"`
}

type trustEntry struct {
	File      string    `json:"file"`
	SHA256    string    `json:"sha256"`
	TrustedAt time.Time `json:"trustedAt"`
	// Grants are the fs grants of the file's extensions as trusted; always
	// written (an empty list when there are none). Nil only in entries
	// written before pi recorded grants: such an entry no longer trusts a
	// file that has fs grants.
	Grants []TrustedGrant `json:"grants"`
	// Programs are the repository files the file makes pi run, with their
	// sha256 as trusted (programs.go); always written. Nil only in entries
	// written before pi recorded them: such an entry no longer trusts a file
	// that names a repository program.
	Programs []TrustedProgram `json:"programs"`
}

// TrustedGrant is one fs grant of a trusted project's extension and where it
// pointed when the project was trusted.
type TrustedGrant struct {
	// Extension is the extension's name, Grant the grant as written
	// ("ro:docs").
	Extension string `json:"extension"`
	Grant     string `json:"grant"`
	// Real is where the grant's path really is, every symlink followed
	// (extspec.ResolveFSGrant against the project root); empty when nothing is
	// there.
	Real string `json:"real,omitempty"`
	// Problem says why the grant is refused (nothing there, not a folder, a
	// project-relative grant that leaves the project); empty when it is a
	// usable grant.
	Problem string `json:"problem,omitempty"`
}

const trustStoreVersion = 1

type trustState int

const (
	untrusted           trustState = iota
	trustChanged                   // trusted once, but the file changed since
	trustGrantMoved                // same file, but an fs grant points elsewhere now
	trustGrantsUnseen              // trusted before grants were recorded; the file has fs grants
	trustProgramChanged            // same file, but a repository program it runs changed
	trustProgramsUnseen            // trusted before programs were recorded; the file names one
	trusted
)

// trustResult is a trust state and, for trustGrantMoved and
// trustProgramChanged, which grant moved from where to where or which file
// changed.
type trustResult struct {
	state  trustState
	detail string
}

// Trust records projectFile's folder, the sha256 of its current content,
// the real path of every fs grant of its extensions (extspec.ResolveFSGrant against
// the file's folder, the project root) and the sha256 of every repository
// file its settings make pi run (programs.go) in $piHome/trust.json, keeping the
// other entries. Later Loads apply that file's settings that need trust
// until its content changes, one of those grants resolves somewhere else
// (or stops resolving, or starts to), or one of those programs changes or
// a new one is named. A grant that does not resolve now is
// recorded as such, with the reason (TrustGrants returns it).
//
// # Errors
//
// An empty piHome, a projectFile that cannot be read or that others can
// change (ErrUnsafeFile), a corrupt or unsafe trust.json, or a failed write
// (trust.json is replaced atomically, never half written).
func Trust(piHome, projectFile string) error {
	return TrustFrom(piHome, projectFile, "")
}

// TrustFrom is Trust run in the working folder cwd ("" for none): program
// words are resolved there too, as a run in cwd resolves them (`pi trust`
// passes its folder).
//
// # Errors
//
// As Trust.
func TrustFrom(piHome, projectFile, cwd string) error {
	if piHome == "" {
		return errors.New("trust project: no PI_HOME")
	}
	file, err := filepath.Abs(projectFile)
	if err != nil {
		return fmt.Errorf("trust project %s: %w", projectFile, err)
	}
	data, err := readSafe(file, "config file")
	if err != nil {
		return fmt.Errorf("trust project %s: %w", file, err)
	}
	// A file that does not load runs nothing; its grants are not recorded
	// (fixing it changes its sha256, which needs trust again anyway).
	l, _ := parseLayer(file, data, ScopeProject)
	grants := resolveGrants(l, filepath.Dir(file))
	if cwd != "" {
		if cwd, err = filepath.Abs(cwd); err != nil {
			return fmt.Errorf("trust project %s: %w", file, err)
		}
	}
	programs := programFiles(l, filepath.Dir(file), cwd)
	dir := canonicalDir(filepath.Dir(file))
	err = updateTrustStore(piHome, func(store *trustStore) bool {
		store.Projects[dir] = trustEntry{File: file, SHA256: digest(data), TrustedAt: time.Now().UTC().Truncate(time.Second), Grants: grants, Programs: programs}
		return true
	})
	if err != nil {
		return fmt.Errorf("trust project %s: %w", file, err)
	}
	return nil
}

// TrustGrants returns the fs grants recorded for projectFile's folder in
// $piHome/trust.json (nil when the folder is not trusted or was trusted
// before grants were recorded), for `pi trust` to show.
//
// # Errors
//
// A corrupt or unsafe trust.json.
func TrustGrants(piHome, projectFile string) ([]TrustedGrant, error) {
	file, err := filepath.Abs(projectFile)
	if err != nil {
		return nil, fmt.Errorf("read trusted grants %s: %w", projectFile, err)
	}
	store, err := readTrustStore(piHome)
	if err != nil {
		return nil, fmt.Errorf("read trusted grants %s: %w", file, err)
	}
	return slices.Clone(store.Projects[canonicalDir(filepath.Dir(file))].Grants), nil
}

// TrustPrograms returns the repository programs recorded for projectFile's
// folder in $piHome/trust.json (nil when the folder is not trusted or was
// trusted before programs were recorded), for `pi trust` to show.
//
// # Errors
//
// A corrupt or unsafe trust.json.
func TrustPrograms(piHome, projectFile string) ([]TrustedProgram, error) {
	file, err := filepath.Abs(projectFile)
	if err != nil {
		return nil, fmt.Errorf("read trusted programs %s: %w", projectFile, err)
	}
	store, err := readTrustStore(piHome)
	if err != nil {
		return nil, fmt.Errorf("read trusted programs %s: %w", file, err)
	}
	return slices.Clone(store.Projects[canonicalDir(filepath.Dir(file))].Programs), nil
}

// resolveGrants resolves every fs grant of l's extensions against root, in
// file order, each (extension, grant) once; never nil.
func resolveGrants(l *layer, root string) []TrustedGrant {
	out := []TrustedGrant{}
	if l == nil {
		return out
	}
	seen := map[[2]string]bool{}
	for _, e := range l.extensions {
		for _, g := range e.Grants.FS {
			if seen[[2]string{e.Name, g}] {
				continue
			}
			seen[[2]string{e.Name, g}] = true
			rec := TrustedGrant{Extension: e.Name, Grant: g}
			r, err := extspec.ResolveFSGrant(g, root)
			rec.Real = r.Real // set when the path exists, even if refused
			if err != nil {
				rec.Problem = err.Error()
			}
			out = append(out, rec)
		}
	}
	return out
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
// with the sha256 of projectFile's current content, with every fs grant
// of its extensions still resolving (against projectFile's folder) where it
// did when trusted, and with the repository programs it names (resolved
// against projectFile's folder) as they were.
//
// # Errors
//
// A projectFile that cannot be read or that others can change
// (ErrUnsafeFile), or a corrupt or unsafe trust.json.
func IsTrusted(piHome, projectFile string) (bool, error) {
	file, err := filepath.Abs(projectFile)
	if err != nil {
		return false, fmt.Errorf("check trust %s: %w", projectFile, err)
	}
	data, err := readSafe(file, "config file")
	if err != nil {
		return false, fmt.Errorf("check trust %s: %w", file, err)
	}
	l, _ := parseLayer(file, data, ScopeProject)
	st, err := trustStatus(piHome, file, data, filepath.Dir(file), "", l)
	if err != nil {
		return false, fmt.Errorf("check trust %s: %w", file, err)
	}
	return st.state == trusted, nil
}

// trustStatus checks the content data of the absolute path file, whose
// decoded layer is l (nil when it does not decode), with relative grants
// taken against root and program words against root and cwd.
func trustStatus(piHome, file string, data []byte, root, cwd string, l *layer) (trustResult, error) {
	if piHome == "" {
		return trustResult{state: untrusted}, nil
	}
	store, err := readTrustStore(piHome)
	if err != nil {
		return trustResult{state: untrusted}, err
	}
	e, ok := store.Projects[canonicalDir(filepath.Dir(file))]
	switch {
	case !ok:
		return trustResult{state: untrusted}, nil
	case e.SHA256 != digest(data) && filepath.Base(e.File) != filepath.Base(file):
		return trustResult{state: untrusted}, nil // another file of that folder was trusted
	case e.SHA256 != digest(data):
		return trustResult{state: trustChanged}, nil
	}
	if st := grantStatus(e, resolveGrants(l, root)); st.state != trusted {
		return st, nil
	}
	programs := programFiles(l, root, cwd)
	if e.Programs == nil {
		if len(programs) > 0 {
			return trustResult{state: trustProgramsUnseen}, nil
		}
		return trustResult{state: trusted}, nil
	}
	if change := programChange(e.Programs, programs); change != "" {
		return trustResult{state: trustProgramChanged, detail: change}, nil
	}
	return trustResult{state: trusted}, nil
}

// grantStatus compares the fs grants recorded in e with where they resolve
// now.
func grantStatus(e trustEntry, now []TrustedGrant) trustResult {
	if e.Grants == nil {
		if len(now) > 0 {
			return trustResult{state: trustGrantsUnseen}
		}
		return trustResult{state: trusted}
	}
	was := map[[2]string]TrustedGrant{}
	for _, g := range e.Grants {
		was[[2]string{g.Extension, g.Grant}] = g
	}
	for _, g := range now {
		old, ok := was[[2]string{g.Extension, g.Grant}]
		if !ok {
			return trustResult{state: trustGrantMoved, detail: fmt.Sprintf("fs grant %q of extension %q was not recorded when it was trusted", g.Grant, g.Extension)}
		}
		if old.Real != g.Real || (old.Problem == "") != (g.Problem == "") {
			return trustResult{state: trustGrantMoved, detail: fmt.Sprintf("fs grant %q of extension %q pointed to %s when it was trusted and now %s",
				g.Grant, g.Extension, describeTarget(old), describeNow(g))}
		}
	}
	return trustResult{state: trusted}
}

// describeTarget says where a recorded grant pointed.
func describeTarget(g TrustedGrant) string {
	switch {
	case g.Real == "":
		return "nothing (" + g.Problem + ")"
	case g.Problem != "":
		return g.Real + " (refused: " + g.Problem + ")"
	}
	return g.Real
}

// describeNow says where a grant points now.
func describeNow(g TrustedGrant) string {
	switch {
	case g.Real == "":
		return "does not resolve (" + g.Problem + ")"
	case g.Problem != "":
		return "points to " + g.Real + " (refused: " + g.Problem + ")"
	}
	return "points to " + g.Real
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
	data, err := readSafe(file, "trust store")
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
