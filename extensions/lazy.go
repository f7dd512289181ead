package extensions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/pi-go/pi/internal/atomicfile"
)

// Lazy loads (Options.DeclaredDir).
//
// A pinned extension (Spec.SHA256 set) that loaded once leaves a record:
// the identity of its file (device, inode, size, mtime, ctime) and what its
// init answered, under a key that hashes the pin and the whole init request
// (config, grants, host facts), so a different config or grant is a
// different record. A later Load that finds the record for the same
// identity registers the extension from it (tools, hooks, commands,
// events) without reading the module. The module is read, its sha256
// verified, compiled and instantiated at the extension's first call; a
// file whose bytes no longer have the pin, or whose init now answers
// differently from the record, faults that call (a tool_call hook that
// faults blocks the call: fail closed), and the extension is disabled after
// MaxFaultsInARow. A file with another identity loads eagerly, as without
// a record, so a rebuilt module is refused at start with
// ErrSHA256Mismatch.

// declaredRecord is one lazy-load record.
type declaredRecord struct {
	File string          `json:"file"` // fileIdentity at the time of the eager load
	Init json.RawMessage `json:"init"` // init's result
}

// recordPath is where the record of spec with this init request lives.
func (h *Host) recordPath(spec Spec, initReq []byte) string {
	k := sha256.New()
	k.Write([]byte(strings.ToLower(spec.SHA256)))
	k.Write([]byte{0})
	k.Write([]byte(spec.Name))
	k.Write([]byte{0})
	k.Write(initReq)
	return filepath.Join(h.opts.DeclaredDir, hex.EncodeToString(k.Sum(nil))+".json")
}

// recordDeclared writes the record of an extension that loaded eagerly;
// failing to write it only costs the next start its laziness.
func (h *Host) recordDeclared(spec Spec, e *Extension) {
	if h.opts.DeclaredDir == "" || spec.SHA256 == "" || e.initRaw == nil {
		return
	}
	id, err := fileIdentity(spec.Path)
	if err != nil {
		return
	}
	b, err := json.Marshal(declaredRecord{File: id, Init: e.initRaw})
	if err != nil {
		return
	}
	if err := os.MkdirAll(h.opts.DeclaredDir, 0o700); err != nil {
		e.logger.Debug("lazy-load record not written", "error", err.Error())
		return
	}
	if err := atomicfile.WriteFile(h.recordPath(spec, e.initReq), b, 0o600); err != nil {
		e.logger.Debug("lazy-load record not written", "error", err.Error())
	}
}

// loadLazy registers spec's extension from its record when there is one
// for the file as it is now; ok is false (and err nil) when the load must
// be eager.
func (h *Host) loadLazy(ctx context.Context, spec Spec, label string) (_ *Extension, ok bool, err error) {
	if h.opts.DeclaredDir == "" || spec.SHA256 == "" || !filepath.IsAbs(spec.Path) {
		return nil, false, nil
	}
	if spec.Name != "" && !extNameRE.MatchString(spec.Name) {
		return nil, false, nil
	}
	pages, execTO, hookTO, err := limitsOf(spec.Limits)
	if err != nil {
		return nil, false, nil // the eager load says what is wrong
	}
	id, err := fileIdentity(spec.Path)
	if err != nil {
		return nil, false, nil
	}
	grants, mounts, err := resolveGrants(spec.Grants, h.opts.ProjectRoot)
	if err != nil {
		return nil, false, nil
	}
	defer func() {
		if !ok || err != nil {
			closeMounts(mounts)
		}
	}()
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, false, nil
	}
	hr, err := h.runtimeFor(ctx, pages)
	h.mu.Unlock()
	if err != nil {
		return nil, false, nil
	}
	m := module{path: spec.Path, sha256: strings.ToLower(spec.SHA256), pages: pages, execTO: execTO, hookTO: hookTO}
	e, err := h.newExtension(spec, label, m, hr, nil, grants, mounts)
	if err != nil {
		return nil, false, nil
	}
	b, err := os.ReadFile(h.recordPath(spec, e.initReq))
	if err != nil {
		return nil, false, nil
	}
	var rec declaredRecord
	if json.Unmarshal(b, &rec) != nil || rec.File != id {
		return nil, false, nil
	}
	res, err := decodeInit(rec.Init)
	if err != nil {
		return nil, false, nil
	}
	e.initRaw, e.lazy, e.recordFile = rec.Init, &res, h.recordPath(spec, e.initReq)
	if err := e.apply(ctx, res); err != nil {
		return nil, false, nil
	}
	if err := h.register(ctx, e); err != nil {
		return nil, true, err
	}
	e.logger.Debug("registered from its record; it starts at its first call")
	return e, true, nil
}

// ensureCompiled reads, verifies and compiles a lazily loaded module before
// its first instance. e.mu is held.
func (e *Extension) ensureCompiled(ctx context.Context) error {
	if e.compiled != nil {
		return nil
	}
	m, err := readModule(e.spec)
	if err != nil {
		return err
	}
	hr, compiled, err := e.host.compile(ctx, m)
	m.release()
	if err != nil {
		return err
	}
	e.rt, e.compiled = hr, compiled
	return nil
}

// sameAsRecord checks a lazily loaded extension's live init answer against
// the record it was registered from.
func (e *Extension) sameAsRecord(res initResult) error {
	if e.lazy == nil || reflect.DeepEqual(*e.lazy, res) {
		return nil
	}
	// The next start loads it eagerly and records it afresh.
	_ = os.Remove(e.recordFile)
	return errors.New("init answered differently from the record the extension was registered from at start (its name, tools, hooks, commands or events changed); restart pi to load it afresh")
}
