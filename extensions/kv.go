package extensions

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/internal/atomicfile"
)

// The kv host methods (ABI 1.1): one store per installed extension and
// scope, under Options.KVDir:
//
//	KVDir/global/ID/
//	KVDir/project/HASH/ID/   HASH: the first 32 hex digits of the sha256 of projectRoot
//
// ID names the extension as installed, never as it names itself:
// KVStoreID(Spec.File, Spec.Name, sha256), the pi.toml entry (the file
// and the entry's name) and the module's digest; for a module no pi.toml
// names (-e, tests) the digest alone. A module that declares another's
// name in init gets a store of its own; two entries loading one module
// have one store each; `pi ext update` moves the entry's stores to the new
// digest (MoveKVStores), and any other change of the module starts empty.
// A store of pi before this rule (KVDir/global/NAME, KVDir/project/HASH/NAME)
// is taken over once, by renaming, by the first pi.toml entry of that
// name to open it: an entry of the global pi.toml for a global store, any
// pi.toml entry for this project's store; never by a -e module.
//
// Each key is one file, named by the hex sha256 of the key plus ".kv",
// holding the key's length (2 bytes, big-endian), the key and the value's
// compact JSON. A set replaces the file atomically and durably
// (internal/atomicfile: written, synced, renamed, folder synced) before the
// guest gets its answer, so a store survives faults, fresh instances,
// restarts and crashes; the last writer of a key wins and no store is ever
// half written.
//
// The quota counts what the disk holds: each entry is charged its
// allocated blocks (st_blocks×512; at least its size rounded up to 4 KiB)
// plus kvEntryOverhead for its inode and directory entry, against
// Limits.KVBytes; and a store holds at most MaxKVEntries keys. The tally
// lives in the store's USAGE file, read and rewritten under an exclusive
// flock of that file by every set and delete (of this or another pi
// process), so a set stats two files and never lists the folder. Each
// process recounts a store from its files once, at its first set or
// delete (a crash between a write and its tally, or a store of an older
// pi, is then corrected). A set checks the charge it predicts (its size
// rounded up to 4 KiB); a file system that allocates more (bigger blocks)
// puts the store over by at most that one entry's difference, and the
// next set is refused.

// MaxKVKeyBytes is the longest kv key.
const MaxKVKeyBytes = 512

// MaxKVEntries is how many keys one store holds at most (per extension and
// scope), whatever its kv_mb: every key is a file.
const MaxKVEntries = 10_000

// maxKVEntries is MaxKVEntries (tests lower it); kvListings counts the
// listings of a store's folder to count it (tests check a set lists none).
var (
	maxKVEntries int64 = MaxKVEntries
	kvListings   atomic.Int64
)

const (
	kvSuffix     = ".kv"
	kvHeaderSize = 2
	kvRootFile   = "ROOT"  // in a project store's folder: the project root it is for
	kvUsageFile  = "USAGE" // in a store: its tally, and the lock of its writers
	// kvBlock is the allocation unit an entry is charged at least.
	kvBlock = 4096
	// kvEntryOverhead is charged per entry for its inode and directory
	// entry.
	kvEntryOverhead = 512
)

// kvStore is one extension's store in one scope.
type kvStore struct {
	dir   string
	quota int64
}

// KVStoreID names the kv stores of an extension as installed: file is the
// pi.toml whose [[extensions]] entry loads it and name that entry's name,
// sha256 the module's digest; file "" is a module no pi.toml names (name
// is then its init's, and only the digest identifies it). The ID is the
// name for people reading the folder, a dot, and 32 hex digits of the hash
// of the rest.
func KVStoreID(file, name, digest string) string {
	h := sha256.New()
	if file == "" {
		fmt.Fprintf(h, "module\x00%s", strings.ToLower(digest))
	} else {
		fmt.Fprintf(h, "entry\x00%s\x00%s\x00%s", file, name, strings.ToLower(digest))
	}
	return name + "." + hex.EncodeToString(h.Sum(nil))[:32]
}

// kvID is the extension's store ID (KVStoreID).
func (e *Extension) kvID() string {
	return KVStoreID(e.spec.File, e.name, e.info.SHA256)
}

// MoveKVStores moves the kv stores of the pi.toml entry (file, name) from
// the module digest oldSHA to newSHA, in every scope and project, after
// `pi ext update` pinned the new digest: the store follows the entry. A
// digest that already has a store keeps it (the entry's old store stays
// where it is); moved lists the folders moved.
func MoveKVStores(kvDir, file, name, oldSHA, newSHA string) (moved []string, err error) {
	if kvDir == "" || strings.EqualFold(oldSHA, newSHA) {
		return nil, nil
	}
	oldID, newID := KVStoreID(file, name, oldSHA), KVStoreID(file, name, newSHA)
	dirs, _ := filepath.Glob(filepath.Join(kvDir, "project", "*", oldID))
	dirs = append(dirs, filepath.Join(kvDir, "global", oldID))
	var errs []error
	for _, d := range dirs {
		to := filepath.Join(filepath.Dir(d), newID)
		if err := atomicfile.MoveDir(d, to); err == nil {
			moved = append(moved, to)
		} else if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrExist) {
			errs = append(errs, fmt.Errorf("move kv store %s: %w", d, err))
		}
	}
	return moved, errors.Join(errs...)
}

// kvOpened holds the store folders this process has opened (and, for a
// store of an older pi, taken over); kvCounted those it has recounted.
var kvOpened, kvCounted sync.Map

// kvStore returns the extension's store for scope ("" is project).
func (e *Extension) kvStore(scope string) (*kvStore, error) {
	base := e.host.opts.KVDir
	if base == "" {
		return nil, errors.New("no kv store: this host has no state folder")
	}
	st := &kvStore{quota: e.spec.Limits.KVBytes()}
	var parent string
	takeOver := e.spec.File != "" // a store of an older pi, keyed by the name
	switch scope {
	case "", abi.ScopeProject:
		root := e.host.opts.ProjectRoot
		sum := sha256.Sum256([]byte(root))
		parent = filepath.Join(base, "project", hex.EncodeToString(sum[:16]))
		if _, err := os.Stat(filepath.Join(parent, kvRootFile)); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(parent, 0o700); err == nil {
				_ = atomicfile.WriteFile(filepath.Join(parent, kvRootFile), []byte(root+"\n"), 0o600)
			}
		}
	case abi.ScopeGlobal:
		parent = filepath.Join(base, "global")
		takeOver = takeOver && e.spec.Scope == "global"
	default:
		return nil, fmt.Errorf("invalid scope %q (project or global)", scope)
	}
	st.dir = filepath.Join(parent, e.kvID())
	if _, done := kvOpened.Load(st.dir); !done {
		if takeOver {
			takeOverOldStore(filepath.Join(parent, e.name), st.dir)
		}
		kvOpened.Store(st.dir, true)
	}
	return st, nil
}

// takeOverOldStore renames the store of an older pi (keyed by the
// extension's name) to its new folder, when that folder does not exist
// yet (another process may have done it: then nothing happens).
func takeOverOldStore(old, dir string) {
	if fi, err := os.Lstat(old); err != nil || !fi.IsDir() {
		return
	}
	_ = atomicfile.MoveDir(old, dir) // fails when dir exists: then it stays
}

// checkKey checks a kv key: 1 to 512 bytes of UTF-8.
func checkKey(k string) error {
	if k == "" || len(k) > MaxKVKeyBytes || !utf8.ValidString(k) {
		return fmt.Errorf("invalid key (a key is 1 to %d bytes of UTF-8)", MaxKVKeyBytes)
	}
	return nil
}

func (s *kvStore) file(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:])+kvSuffix)
}

// read returns a key's value, nil when it is not set.
func (s *kvStore) read(key string) (json.RawMessage, error) {
	b, err := os.ReadFile(s.file(key))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kv: %w", err)
	}
	k, v, err := decodeKVFile(b)
	if err != nil || k != key {
		return nil, fmt.Errorf("kv: the entry of %q is damaged; delete it", key)
	}
	return v, nil
}

func decodeKVFile(b []byte) (key string, value json.RawMessage, err error) {
	if len(b) < kvHeaderSize {
		return "", nil, errors.New("short entry")
	}
	n := int(binary.BigEndian.Uint16(b))
	if len(b) < kvHeaderSize+n {
		return "", nil, errors.New("short entry")
	}
	return string(b[kvHeaderSize : kvHeaderSize+n]), b[kvHeaderSize+n:], nil
}

// kvCharge is what an entry of size bytes, of which the file system
// reports blocks 512-byte blocks allocated (0: unknown), costs the quota.
func kvCharge(size, blocks int64) int64 {
	return max((size+kvBlock-1)/kvBlock*kvBlock, blocks*512) + kvEntryOverhead
}

// entryCharge is the charge of the entry file at path, 0 and false when
// there is none.
func entryCharge(path string) (int64, bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("kv: %w", err)
	}
	return kvCharge(fi.Size(), allocatedBlocks(fi)), true, nil
}

// kvUsage is a store's tally.
type kvUsage struct{ bytes, entries int64 }

// kvUsageLen is the USAGE file's fixed length: "BYTES ENTRIES\n", each
// 20 digits.
const kvUsageLen = 42

// withUsage runs fn with the store's tally under the exclusive lock of its
// USAGE file (lockFile: a flock, shared with every pi process), and
// writes the tally back when fn succeeds. The first call of the process on
// a store recounts it from its files.
func (s *kvStore) withUsage(fn func(u *kvUsage) error) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, kvUsageFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	defer f.Close()
	unlock, err := lockFile(f)
	if err != nil {
		return fmt.Errorf("kv: lock %s: %w", f.Name(), err)
	}
	defer unlock()
	var u kvUsage
	buf := make([]byte, kvUsageLen)
	n, _ := f.ReadAt(buf, 0)
	_, counted := kvCounted.Load(s.dir)
	if !counted || n != kvUsageLen || parseUsage(buf, &u) != nil {
		if u, err = s.count(); err != nil {
			return err
		}
		kvCounted.Store(s.dir, true)
	}
	if err := fn(&u); err != nil {
		return err
	}
	if _, err := f.WriteAt(fmt.Appendf(nil, "%020d %020d\n", u.bytes, u.entries), 0); err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	return nil
}

func parseUsage(b []byte, u *kvUsage) error {
	_, err := fmt.Sscanf(string(b), "%d %d\n", &u.bytes, &u.entries)
	return err
}

// count is the store's tally from its files (one listing).
func (s *kvStore) count() (kvUsage, error) {
	var u kvUsage
	kvListings.Add(1)
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return u, fmt.Errorf("kv: %w", err)
	}
	for _, d := range ents {
		if !isKVFile(d.Name()) {
			continue
		}
		c, ok, err := entryCharge(filepath.Join(s.dir, d.Name()))
		if err != nil || !ok {
			continue // removed meanwhile
		}
		u.bytes += c
		u.entries++
	}
	return u, nil
}

// isKVFile reports a store entry's name (64 hex digits and .kv; the
// writer's temporary files are not).
func isKVFile(name string) bool {
	h, ok := strings.CutSuffix(name, kvSuffix)
	if !ok || len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// set stores value (compact JSON) under key; null deletes it.
func (s *kvStore) set(key string, value json.RawMessage) error {
	var compact bytes.Buffer
	if err := json.Compact(&compact, value); err != nil || compact.Len() == 0 {
		return errors.New("kv.set: value must be JSON")
	}
	if compact.String() == "null" {
		return s.delete(key)
	}
	buf := make([]byte, kvHeaderSize, kvHeaderSize+len(key)+compact.Len())
	binary.BigEndian.PutUint16(buf, uint16(len(key)))
	buf = append(append(buf, key...), compact.Bytes()...)
	path := s.file(key)
	return s.withUsage(func(u *kvUsage) error {
		old, had, err := entryCharge(path)
		if err != nil {
			return err
		}
		entries := u.entries
		if !had {
			entries++
		}
		if entries > maxKVEntries {
			return fmt.Errorf("kv store full (%d keys, the most a store holds; delete some)", maxKVEntries)
		}
		if total := u.bytes - old + kvCharge(int64(len(buf)), 0); total > s.quota {
			return fmt.Errorf("kv quota exceeded (%d of %d bytes on disk)", total, s.quota)
		}
		if err := atomicfile.WriteFile(path, buf, 0o600); err != nil {
			return fmt.Errorf("kv: %w", err)
		}
		now, _, err := entryCharge(path)
		if err != nil {
			return err
		}
		u.bytes += now - old
		u.entries = entries
		return nil
	})
}

// delete removes key (and syncs the folder, so the removal is durable).
func (s *kvStore) delete(key string) error {
	path := s.file(key)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil // nothing to do: no lock, no folder made
	}
	return s.withUsage(func(u *kvUsage) error {
		old, had, err := entryCharge(path)
		if err != nil || !had {
			return err
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("kv: %w", err)
		}
		u.bytes -= old
		u.entries--
		if d, err := os.Open(s.dir); err == nil {
			_ = d.Sync()
			d.Close()
		}
		return nil
	})
}

// list returns the keys with prefix, sorted.
func (s *kvStore) list(prefix string) ([]string, error) {
	keys := []string{}
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return keys, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kv: %w", err)
	}
	for _, d := range ents {
		if !isKVFile(d.Name()) {
			continue
		}
		k, err := readKVKey(filepath.Join(s.dir, d.Name()))
		if err != nil {
			continue // removed meanwhile, or damaged: get reports it
		}
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

func readKVKey(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var head [kvHeaderSize]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return "", err
	}
	k := make([]byte, binary.BigEndian.Uint16(head[:]))
	if _, err := io.ReadFull(f, k); err != nil {
		return "", err
	}
	return string(k), nil
}

// kvCall answers the kv host methods.
func (e *Extension) kvCall(method string, params json.RawMessage) ([]byte, error) {
	var scope, key, prefix string
	var value json.RawMessage
	switch method {
	case abi.HostMethodKVGet:
		var p abi.KVGetParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		key, scope = p.Key, p.Scope
	case abi.HostMethodKVSet:
		var p abi.KVSetParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if p.Value == nil {
			return nil, errors.New("kv.set: params need a value (null deletes the key)")
		}
		key, scope, value = p.Key, p.Scope, p.Value
	case abi.HostMethodKVDelete:
		var p abi.KVDeleteParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		key, scope = p.Key, p.Scope
	case abi.HostMethodKVList:
		var p abi.KVListParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		prefix, scope = p.Prefix, p.Scope
	}
	st, err := e.kvStore(scope)
	if err != nil {
		return nil, err
	}
	if method != abi.HostMethodKVList {
		if err := checkKey(key); err != nil {
			return nil, err
		}
	}
	switch method {
	case abi.HostMethodKVGet:
		v, err := st.read(key)
		if err != nil {
			return nil, err
		}
		if v == nil {
			v = json.RawMessage("null")
		}
		return encodeOK(abi.KVGetResult{Value: v}), nil
	case abi.HostMethodKVSet:
		if err := st.set(key, value); err != nil {
			return nil, err
		}
	case abi.HostMethodKVDelete:
		if err := st.delete(key); err != nil {
			return nil, err
		}
	case abi.HostMethodKVList:
		keys, err := st.list(prefix)
		if err != nil {
			return nil, err
		}
		return encodeOK(abi.KVListResult{Keys: keys}), nil
	}
	return encodeOK(abi.EmptyResult{}), nil
}

// decodeParams decodes a host method's params strictly; null or no params
// is an error naming the method.
func decodeParams(method string, raw json.RawMessage, v any) error {
	if isNull(raw) || !isObject(raw) {
		return fmt.Errorf("%s: params must be an object", method)
	}
	if err := decodeStrict(raw, v); err != nil {
		return fmt.Errorf("%s: malformed params: %w", method, err)
	}
	return nil
}
