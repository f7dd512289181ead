// Package checkpoint records a project's files before and after each turn
// of a conversation, so that the turn's changes can be undone and redone,
// whatever tool made them (write, edit, bash, an extension).
//
// A Store lives in a folder of its own beside the session file, never in
// the project or its git repository: objects/ holds file contents by their
// sha256 (each content stored once), manifests/ the snapshots (the list of
// files with size, modification time, inode, mode and content hash; gzip
// JSON, named by their own hash), turns.json the turns recorded.
//
// A snapshot walks the project as git sees it (internal/gitignore: .gitignore
// files honoured, .git skipped, symbolic links recorded, not followed). A
// file whose size, modification time, inode and mode are those of the
// previous snapshot is not read again (git's rule, racy files included: one
// modified in the same clock tick as the previous snapshot is read again).
// Files larger than Options.MaxFileSize are listed but not stored: a turn
// that changed one cannot restore it, and Restore says so.
package checkpoint

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/internal/gitignore"
)

// Defaults of Options.
const (
	DefaultMaxFileSize = 4 << 20
	DefaultMaxFiles    = 200_000
	DefaultMaxRead     = 512 << 20
)

// Options bound what a snapshot records.
type Options struct {
	// MaxFileSize is the largest file stored (bytes); 0 means
	// DefaultMaxFileSize.
	MaxFileSize int64
	// MaxFiles is the most entries a snapshot lists; past it the snapshot
	// is Incomplete. 0 means DefaultMaxFiles.
	MaxFiles int
	// MaxRead bounds the bytes one snapshot reads (files new or changed
	// since the previous one): past it files are listed, not stored (a
	// first snapshot of a home folder must not copy it). 0 means
	// DefaultMaxRead.
	MaxRead int64
}

// File is one entry of a snapshot.
type File struct {
	// Path is the slash path from the project's root.
	Path string `json:"p"`
	// Mode is the type and permission bits (a regular file, a directory
	// or a symbolic link).
	Mode  fs.FileMode `json:"m"`
	Size  int64       `json:"s,omitempty"`
	MTime int64       `json:"t,omitempty"` // Unix nanoseconds
	Ino   uint64      `json:"i,omitempty"`
	// Hash is the sha256 of a file's content or a link's target; "" for a
	// directory and for a file not stored (TooLarge: larger than
	// MaxFileSize, or past the snapshot's MaxRead).
	Hash     string `json:"h,omitempty"`
	TooLarge bool   `json:"l,omitempty"`
}

// same says f and g hold the same thing (type, permissions, content).
func (f File) same(g File) bool {
	return f.Mode == g.Mode && f.Hash == g.Hash && f.TooLarge == g.TooLarge && (!f.TooLarge || f.Size == g.Size && f.MTime == g.MTime)
}

// Manifest is one snapshot of the project.
type Manifest struct {
	// ID is the sha256 of its encoding (empty until stored).
	ID string `json:"-"`
	// Time is when the walk started (Unix nanoseconds).
	Time  int64  `json:"time"`
	Files []File `json:"files"`
	// Incomplete: the project had more than Options.MaxFiles entries.
	Incomplete bool `json:"incomplete,omitempty"`
	byPath     map[string]int
}

// Get returns the entry of path.
func (m *Manifest) Get(path string) (File, bool) {
	if m.byPath == nil {
		m.byPath = make(map[string]int, len(m.Files))
		for i, f := range m.Files {
			m.byPath[f.Path] = i
		}
	}
	i, ok := m.byPath[path]
	if !ok {
		return File{}, false
	}
	return m.Files[i], true
}

// Store is the checkpoints of one session for one project folder.
type Store struct {
	dir, root string
	o         Options
}

// Open returns the store in dir (created when first written) of the
// project at root.
func Open(dir, root string, o Options) *Store {
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.MaxRead <= 0 {
		o.MaxRead = DefaultMaxRead
	}
	return &Store{dir: dir, root: root, o: o}
}

// Dir is the store's folder.
func (s *Store) Dir() string { return s.dir }

// Snapshot records the project's files now: those prev lists unchanged
// (same size, modification time, inode and mode, not racy) are not read
// again. It returns prev itself when nothing changed. prev may be nil.
//
// # Errors
//
// ctx's error; a file's content or the manifest cannot be stored.
func (s *Store) Snapshot(ctx context.Context, prev *Manifest) (*Manifest, error) {
	m := &Manifest{Time: time.Now().UnixNano()}
	changed := prev == nil
	var read int64
	// Files to read are stored by a few workers while the walk goes on
	// (the first snapshot reads every file: its cost is the files'
	// opens, reads and creates in the store, which overlap).
	jobs := make(chan storeJob, 256)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results = map[int]storeResult{}
		putErr  error
	)
	for range storeWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				var r storeResult
				data, err := readAtMost(j.path, s.o.MaxFileSize)
				switch {
				case errors.Is(err, errTooLarge):
					r.tooLarge = true
				case err != nil:
					r.unreadable = true
				default:
					if r.hash, err = s.put(data); err != nil {
						mu.Lock()
						putErr = cmp.Or(putErr, err)
						mu.Unlock()
					}
				}
				mu.Lock()
				results[j.i] = r
				mu.Unlock()
			}
		}()
	}
	err := gitignore.Walk(ctx, s.root, func(e gitignore.Entry) error {
		if len(m.Files) >= s.o.MaxFiles {
			m.Incomplete = true
			return gitignore.ErrStop
		}
		fi, err := os.Lstat(e.Path)
		if err != nil {
			return nil // gone meanwhile
		}
		f := File{Path: e.Rel, Mode: fi.Mode() & (fs.ModeType | fs.ModePerm)}
		switch {
		case fi.IsDir():
			f.Mode = fs.ModeDir | fi.Mode().Perm()
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(e.Path)
			if err != nil {
				return nil
			}
			f.Hash, err = s.put([]byte(target))
			if err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			f.Size, f.MTime, f.Ino = fi.Size(), fi.ModTime().UnixNano(), inode(fi)
			if p, ok := prevFile(prev, e.Rel); ok && p.Mode == f.Mode && p.Size == f.Size && p.MTime == f.MTime && p.Ino == f.Ino {
				if p.MTime < prev.Time {
					f.Hash, f.TooLarge = p.Hash, p.TooLarge
					break
				}
				// Racy: changed in the clock tick of the previous
				// snapshot. Read again, and record a new snapshot so
				// that it is not read every time.
				changed = true
			}
			if f.Size > s.o.MaxFileSize || read+f.Size > s.o.MaxRead {
				f.TooLarge = true
				break
			}
			read += f.Size
			// Read, hashed and stored by the workers; the entry is
			// filled in after the walk.
			changed = true
			jobs <- storeJob{i: len(m.Files), path: e.Path}
		default:
			return nil // sockets, devices, fifos: not recorded
		}
		if !changed {
			if p, ok := prevFile(prev, e.Rel); !ok || p != f {
				changed = true
			}
		}
		m.Files = append(m.Files, f)
		return nil
	})
	close(jobs)
	wg.Wait()
	if err == nil {
		err = putErr
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", s.root, err)
	}
	if len(results) > 0 {
		files := m.Files[:0]
		for i, f := range m.Files {
			if r, ok := results[i]; ok {
				if r.unreadable {
					continue // not recorded
				}
				f.Hash, f.TooLarge = r.hash, r.tooLarge
			}
			files = append(files, f)
		}
		m.Files = files
	}
	if !changed && len(m.Files) == len(prev.Files) && m.Incomplete == prev.Incomplete {
		return prev, nil
	}
	if err := s.saveManifest(m); err != nil {
		return nil, err
	}
	return m, nil
}

// storeWorkers read and store files beside the walk.
const storeWorkers = 4

type storeJob struct {
	i    int
	path string
}

type storeResult struct {
	hash                 string
	tooLarge, unreadable bool
}

func prevFile(prev *Manifest, path string) (File, bool) {
	if prev == nil {
		return File{}, false
	}
	return prev.Get(path)
}

var errTooLarge = errors.New("file too large")

// readAtMost reads a file of at most max bytes.
func readAtMost(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errTooLarge
	}
	return data, nil
}

// put stores data by its hash (once) and returns the hash. An object is
// created once and never rewritten, so it is written in place, without
// the temporary file, renames and fsyncs of atomicfile (two fsyncs per
// file made a first snapshot of 20k files take a minute): one cut short
// by a crash has the wrong size and is written again the next time, and
// get checks every object's hash before it is restored.
func (s *Store) put(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	p := s.objectPath(h)
	if fi, err := os.Stat(p); err == nil {
		if fi.Size() == int64(len(data)) {
			return h, nil
		}
		os.Remove(p) // cut short
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("checkpoint store: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return h, nil // written meanwhile
	}
	if err != nil {
		return "", fmt.Errorf("checkpoint store: %w", err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(p)
		return "", fmt.Errorf("checkpoint store: %w", werr)
	}
	return h, nil
}

func (s *Store) objectPath(h string) string {
	return filepath.Join(s.dir, "objects", h[:2], h[2:])
}

// get reads an object, checking its hash.
func (s *Store) get(h string) ([]byte, error) {
	data, err := os.ReadFile(s.objectPath(h))
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != h {
		return nil, fmt.Errorf("checkpoint store: object %s is damaged", h)
	}
	return data, nil
}

func (s *Store) saveManifest(m *Manifest) error {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err := json.NewEncoder(zw).Encode(m); err != nil {
		return fmt.Errorf("checkpoint manifest: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("checkpoint manifest: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	m.ID = hex.EncodeToString(sum[:])
	if err := os.MkdirAll(filepath.Join(s.dir, "manifests"), 0o700); err != nil {
		return fmt.Errorf("checkpoint manifest: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(s.dir, "manifests", m.ID+".json.gz"), buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("checkpoint manifest: %w", err)
	}
	return nil
}

// Load reads the manifest id.
//
// # Errors
//
// No such manifest; a damaged one.
func (s *Store) Load(id string) (*Manifest, error) {
	if len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("checkpoint manifest %q: not a manifest id", id)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, "manifests", id+".json.gz"))
	if err != nil {
		return nil, fmt.Errorf("checkpoint manifest: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("checkpoint manifest %s: %w", id, err)
	}
	var m Manifest
	if err := json.NewDecoder(zr).Decode(&m); err != nil {
		return nil, fmt.Errorf("checkpoint manifest %s: %w", id, err)
	}
	m.ID = id
	return &m, nil
}

// Change is a path whose entry differs between two snapshots.
type Change struct {
	Path string
	// From and To are the entries (Exists false where there is none).
	From, To File
	// FromExists, ToExists say whether the path is in each snapshot.
	FromExists, ToExists bool
}

// Kind says what the change is: created, deleted, modified (content,
// type) or mode (permissions only).
func (c Change) Kind() string {
	switch {
	case !c.FromExists:
		return "created"
	case !c.ToExists:
		return "deleted"
	case c.From.Hash == c.To.Hash && c.From.Mode.Type() == c.To.Mode.Type() && c.From.TooLarge == c.To.TooLarge:
		return "mode"
	}
	return "modified"
}

// Diff lists the paths whose entries differ from a to b, sorted. A path
// missing from an Incomplete manifest is not known to be missing: it is
// left out.
func Diff(a, b *Manifest) []Change {
	var out []Change
	for _, f := range a.Files {
		g, ok := b.Get(f.Path)
		if !ok && b.Incomplete {
			continue
		}
		if !ok || !f.same(g) {
			out = append(out, Change{Path: f.Path, From: f, To: g, FromExists: true, ToExists: ok})
		}
	}
	for _, g := range b.Files {
		if _, ok := a.Get(g.Path); !ok && !a.Incomplete {
			out = append(out, Change{Path: g.Path, To: g, ToExists: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// ConflictError is Restore's refusal: files changed since the state it
// was to restore from, which it would overwrite.
type ConflictError struct {
	Paths []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%d file(s) changed since: %s; restoring would overwrite them", len(e.Paths), strings.Join(e.Paths, ", "))
}

// Result is what Restore did.
type Result struct {
	// Restored are the paths brought back to the target state.
	Restored []string
	// NotRestored are the paths it could not restore (too large to have
	// been stored, or a failure), with why.
	NotRestored map[string]string
}

// Restore brings every path that differs between expected and target
// back to target's state: content, permissions, existence (a file
// created since is removed, a deleted one written back, a renamed one
// both); directories are created and emptied ones removed as target has
// them. The project must still be as expected for those paths: one that
// changed since (compared with a snapshot taken now) is a conflict, and
// Restore refuses with *ConflictError unless force.
//
// # Errors
//
// *ConflictError; the current state cannot be read.
func (s *Store) Restore(ctx context.Context, expected, target *Manifest, force bool) (*Result, error) {
	changes := Diff(expected, target)
	res := &Result{NotRestored: map[string]string{}}
	if len(changes) == 0 {
		return res, nil
	}
	cur, err := s.Snapshot(ctx, expected)
	if err != nil {
		return nil, err
	}
	// A path already as target wants (the person put it back, a
	// files-only rewind did) needs nothing, and is no conflict.
	pending := changes[:0]
	for _, c := range changes {
		now, ok := cur.Get(c.Path)
		if ok == c.ToExists && (!ok || now.same(c.To) || now.Mode.IsDir() && c.To.Mode.IsDir()) {
			continue
		}
		pending = append(pending, c)
	}
	changes = pending
	if !force {
		var conflicts []string
		for _, c := range changes {
			now, ok := cur.Get(c.Path)
			if !ok && cur.Incomplete {
				conflicts = append(conflicts, c.Path) // not known: not overwritten
				continue
			}
			if ok != c.FromExists || ok && !now.same(c.From) {
				if ok && now.Mode.IsDir() && c.From.Mode.IsDir() {
					continue
				}
				conflicts = append(conflicts, c.Path)
			}
		}
		if len(conflicts) > 0 {
			return nil, &ConflictError{Paths: conflicts}
		}
	}
	// Directories first (parents before children), then files, then
	// what is removed, deepest first.
	var removes []Change
	for _, c := range changes {
		if !c.ToExists {
			removes = append(removes, c)
			continue
		}
		if !c.To.Mode.IsDir() {
			continue
		}
		p := filepath.Join(s.root, filepath.FromSlash(c.Path))
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
			os.Remove(p)
		}
		if err := os.MkdirAll(p, 0o700); err != nil {
			res.NotRestored[c.Path] = err.Error()
			continue
		}
		if err := os.Chmod(p, c.To.Mode.Perm()); err != nil {
			res.NotRestored[c.Path] = err.Error()
			continue
		}
		res.Restored = append(res.Restored, c.Path)
	}
	for _, c := range changes {
		if !c.ToExists || c.To.Mode.IsDir() {
			continue
		}
		if err := s.write(c.Path, c.To); err != nil {
			res.NotRestored[c.Path] = err.Error()
			continue
		}
		res.Restored = append(res.Restored, c.Path)
	}
	sort.Slice(removes, func(i, j int) bool { return removes[i].Path > removes[j].Path })
	for _, c := range removes {
		p := filepath.Join(s.root, filepath.FromSlash(c.Path))
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			// A directory still holding files (ignored ones) stays.
			res.NotRestored[c.Path] = err.Error()
			continue
		}
		res.Restored = append(res.Restored, c.Path)
	}
	sort.Strings(res.Restored)
	return res, nil
}

// write makes path hold f (a file or a link).
func (s *Store) write(rel string, f File) error {
	if f.TooLarge {
		return fmt.Errorf("not stored: larger than %d bytes, or past the %d bytes one checkpoint reads", s.o.MaxFileSize, s.o.MaxRead)
	}
	data, err := s.get(f.Hash)
	if err != nil {
		return err
	}
	p := filepath.Join(s.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	// What is there now is replaced, not written through: a link stays
	// no link, a directory goes if empty.
	if fi, err := os.Lstat(p); err == nil && (fi.Mode().Type() != f.Mode.Type() || fi.Mode()&fs.ModeSymlink != 0) {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	if f.Mode&fs.ModeSymlink != 0 {
		return os.Symlink(string(data), p)
	}
	if err := atomicfile.WriteFile(p, data, f.Mode.Perm()); err != nil {
		return err
	}
	return os.Chmod(p, f.Mode.Perm())
}
