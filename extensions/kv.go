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
	"unicode/utf8"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/internal/atomicfile"
)

// The kv host methods (ABI 1.1): one store per extension name and scope,
// under Options.KVDir:
//
//	KVDir/global/NAME/
//	KVDir/project/HASH/NAME/   HASH: the first 32 hex digits of the sha256 of projectRoot
//
// Each key is one file, named by the hex sha256 of the key plus ".kv",
// holding the key's length (2 bytes, big-endian), the key and the value's
// compact JSON. A set replaces the file atomically and durably
// (internal/atomicfile: written, synced, renamed, folder synced) before the
// guest gets its answer, so a store survives faults, fresh instances,
// restarts and crashes; two pi processes each replace whole files, so the
// last writer of a key wins and no store is ever half written. A store's
// size is the sum of its keys' bytes and their values' JSON bytes; a set
// that would take it over Limits.KVBytes is refused.

// MaxKVKeyBytes is the longest kv key.
const MaxKVKeyBytes = 512

const (
	kvSuffix     = ".kv"
	kvHeaderSize = 2
	kvRootFile   = "ROOT" // in a project store's folder: the project root it is for
)

// kvStore is one extension's store in one scope.
type kvStore struct {
	dir   string
	quota int64
}

// kvStore returns the extension's store for scope ("" is project).
func (e *Extension) kvStore(scope string) (*kvStore, error) {
	base := e.host.opts.KVDir
	if base == "" {
		return nil, errors.New("no kv store: this host has no state folder")
	}
	st := &kvStore{quota: e.spec.Limits.KVBytes()}
	switch scope {
	case "", abi.ScopeProject:
		root := e.host.opts.ProjectRoot
		sum := sha256.Sum256([]byte(root))
		proj := filepath.Join(base, "project", hex.EncodeToString(sum[:16]))
		st.dir = filepath.Join(proj, e.name)
		if _, err := os.Stat(filepath.Join(proj, kvRootFile)); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(proj, 0o700); err == nil {
				_ = atomicfile.WriteFile(filepath.Join(proj, kvRootFile), []byte(root+"\n"), 0o600)
			}
		}
	case abi.ScopeGlobal:
		st.dir = filepath.Join(base, "global", e.name)
	default:
		return nil, fmt.Errorf("invalid scope %q (project or global)", scope)
	}
	return st, nil
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

// size sums the store's entries, less the entry of skip.
func (s *kvStore) size(skip string) (int64, error) {
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("kv: %w", err)
	}
	skipName := filepath.Base(s.file(skip))
	var total int64
	for _, d := range ents {
		if !isKVFile(d.Name()) || d.Name() == skipName {
			continue
		}
		fi, err := d.Info()
		if err != nil {
			continue // removed meanwhile
		}
		total += max(fi.Size()-kvHeaderSize, 0)
	}
	return total, nil
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
	others, err := s.size(key)
	if err != nil {
		return err
	}
	if total := others + int64(len(key)) + int64(compact.Len()); total > s.quota {
		return fmt.Errorf("kv quota exceeded (%d of %d bytes)", total, s.quota)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	buf := make([]byte, kvHeaderSize, kvHeaderSize+len(key)+compact.Len())
	binary.BigEndian.PutUint16(buf, uint16(len(key)))
	buf = append(append(buf, key...), compact.Bytes()...)
	if err := atomicfile.WriteFile(s.file(key), buf, 0o600); err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	return nil
}

// delete removes key (and syncs the folder, so the removal is durable).
func (s *kvStore) delete(key string) error {
	err := os.Remove(s.file(key))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	if d, err := os.Open(s.dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
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
