package extensions

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
)

// Loading a module from the compilation cache.
//
// wazero's CompileModule decodes and validates a whole module before it
// looks in its compilation cache: for a Go guest of 4 MB that is most of a
// warm load (~60 ms of ~90 ms of CPU). The validation of the function
// bodies is what costs, and wazero has no switch to skip it. So a module
// compiled with the cache is loaded back through its *shell*: the same
// module with every function body replaced by `unreachable` (types,
// imports, functions, tables, memory, globals, exports, elements, data and
// custom sections unchanged), plus a custom section naming the real
// module's sha256. The shell decodes and validates in a few milliseconds;
// the compiled code it is loaded with is the real module's:
//
//   - On a compile (a module this cache has no record of), the real module
//     is compiled and validated in full, as always, by a runtime of the
//     same configuration on a private cache folder; the shell is compiled
//     there too, which names the cache entry wazero looks for when it
//     compiles the shell. The real module's entry is moved into the shared
//     cache under that name, and a record (CacheDir/pi-compiled/VERSION-
//     ARCH-OS/SHA256, see compiledMarker) keeps the entry's name and size.
//   - A later load with the record compiles the shell, which wazero finds
//     in the cache: the real module's code. The entry's identity (device,
//     inode, size, times) is taken before and after that compile and must
//     not change, and its size must be the recorded one, so a shell
//     compiled from scratch (its code only traps, and wazero would write
//     it to the cache as an entry of another size, under a new inode) is
//     never used: the load falls back to compiling the real module.
//
// A shell names the real module's sha256, so two modules that differ only
// in their code have different shells (and cache entries). The cache
// folder is trusted as before: whoever can write it can already give
// wazero native code to run (runtime/config.TrustedCacheDir checks it).

// shellSection is the name of the custom section a shell carries: the
// sha256 (32 bytes) of the module it stands for.
const shellSection = "pi.shell-of-sha256"

// shellLoads counts loads that took the compiled code through a shell
// (for the tests).
var shellLoads atomic.Int64

// shellOf returns the shell of the module wasm whose sha256 is sum (hex):
// the module with each function body replaced by `unreachable`, and the
// custom section shellSection. It fails on a module it cannot walk (the
// compile of the real module then reports what is wrong).
func shellOf(wasm []byte, sum string) ([]byte, error) {
	digest, err := hex.DecodeString(sum)
	if err != nil || len(digest) != 32 {
		return nil, fmt.Errorf("bad sha256 %q", sum)
	}
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly module")
	}
	out := make([]byte, 0, len(wasm)/2)
	out = append(out, wasm[:8]...)
	p := 8
	codeSeen := false
	for p < len(wasm) {
		id := wasm[p]
		size, n := binary.Uvarint(wasm[p+1:])
		if n <= 0 || size > uint64(len(wasm)-(p+1+n)) {
			return nil, fmt.Errorf("section at offset %d: bad size", p)
		}
		start, end := p+1+n, p+1+n+int(size)
		if id != 10 { // not the code section: as it is
			out = append(out, wasm[p:end]...)
			p = end
			continue
		}
		if codeSeen {
			return nil, errors.New("two code sections")
		}
		codeSeen = true
		count, m := binary.Uvarint(wasm[start:end])
		if m <= 0 || count > uint64(end-start) {
			return nil, fmt.Errorf("code section at offset %d: bad count", p)
		}
		// Each body must be walkable, so the shell has as many functions
		// as the module.
		q := start + m
		for i := uint64(0); i < count; i++ {
			bs, k := binary.Uvarint(wasm[q:end])
			if k <= 0 || bs > uint64(end-q-k) {
				return nil, fmt.Errorf("code section: function body %d: bad size", i)
			}
			q += k + int(bs)
		}
		if q != end {
			return nil, errors.New("code section: bytes after the last body")
		}
		body := binary.AppendUvarint(nil, count)
		for i := uint64(0); i < count; i++ {
			// size 3: no locals, unreachable, end
			body = append(body, 3, 0, 0x00, 0x0b)
		}
		out = append(out, 10)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
		p = end
	}
	custom := binary.AppendUvarint(nil, uint64(len(shellSection)))
	custom = append(custom, shellSection...)
	custom = append(custom, digest...)
	out = append(out, 0)
	out = binary.AppendUvarint(out, uint64(len(custom)))
	return append(out, custom...), nil
}

// compileRecord is what a record says: the cache entry that holds the
// module's compiled code (wazero's folder and file name, relative to
// CacheDir) and its size.
type compileRecord struct {
	entry string
	size  int64
}

// readRecord reads the record at path. An empty or malformed record (an
// older pi's marker) is no record.
func readRecord(path string) (compileRecord, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return compileRecord{}, false
	}
	f := strings.Fields(string(b))
	if len(f) != 3 || f[0] != "shell" {
		return compileRecord{}, false
	}
	dir, file, ok := strings.Cut(f[1], "/")
	if !ok || !strings.HasPrefix(dir, "wazero-") || strings.Contains(dir, `\`) || len(file) != 64 {
		return compileRecord{}, false
	}
	if _, err := hex.DecodeString(file); err != nil {
		return compileRecord{}, false
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size <= 0 {
		return compileRecord{}, false
	}
	return compileRecord{entry: filepath.Join(dir, file), size: size}, true
}

// writeRecord writes the record at path (a temporary file renamed over it,
// so a reader sees the old record or the new one).
func writeRecord(path string, rec compileRecord) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".record-*")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(tmp, "shell %s %d\n", filepath.ToSlash(rec.entry), rec.size)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// cacheRoot is CacheDir made absolute ("" with no cache).
func (h *Host) cacheRoot() string {
	if h.cache == nil {
		return ""
	}
	abs, err := filepath.Abs(h.opts.CacheDir)
	if err != nil {
		return ""
	}
	return abs
}

// compileRecorded loads m's compiled code through its shell when the cache
// has a record of it; ok is false (and nothing is left open) when it has
// none or the entry is not the recorded one.
func (h *Host) compileRecorded(ctx context.Context, hr *hostRuntime, m module) (wazero.CompiledModule, bool) {
	root := h.cacheRoot()
	marker := h.compiledMarker(m.sha256)
	if root == "" || marker == "" {
		return nil, false
	}
	rec, ok := readRecord(marker)
	if !ok {
		return nil, false
	}
	entry := filepath.Join(root, rec.entry)
	if st, err := os.Stat(entry); err != nil || st.Size() != rec.size {
		return nil, false
	}
	before, err := fileIdentity(entry)
	if err != nil {
		return nil, false
	}
	shell, err := shellOf(m.wasm, m.sha256)
	if err != nil {
		return nil, false
	}
	compiled, err := hr.r.CompileModule(ctx, shell)
	if err != nil {
		return nil, false
	}
	if after, err := fileIdentity(entry); err != nil || after != before {
		// The entry changed during the compile: wazero may have compiled
		// the shell itself (and written its code as the entry). Not used.
		_ = compiled.Close(ctx)
		if st, err := os.Stat(entry); err == nil && st.Size() != rec.size {
			_ = os.Remove(entry)
		}
		return nil, false
	}
	shellLoads.Add(1)
	return compiled, true
}

// compileAndRecord compiles m in full and, with a cache, records it so
// later loads take its code through its shell (see above); the module it
// returns is loaded through the shell when the recording worked, else
// compiled in hr as it is. A module that does not compile fails with
// wazero's error.
func (h *Host) compileAndRecord(ctx context.Context, hr *hostRuntime, m module) (wazero.CompiledModule, error) {
	root := h.cacheRoot()
	marker := h.compiledMarker(m.sha256)
	if root == "" || marker == "" {
		return hr.r.CompileModule(ctx, m.wasm)
	}
	shell, err := shellOf(m.wasm, m.sha256)
	if err != nil {
		return hr.r.CompileModule(ctx, m.wasm)
	}
	if compileErr, err := h.record(ctx, root, marker, m, shell); compileErr != nil {
		return nil, compileErr
	} else if err != nil {
		h.logger.Debug("compiled code not recorded; compiling again", "path", m.path, "error", err)
		return hr.r.CompileModule(ctx, m.wasm)
	}
	if compiled, ok := h.compileRecorded(ctx, hr, m); ok {
		return compiled, nil
	}
	return hr.r.CompileModule(ctx, m.wasm)
}

// record compiles m and its shell on a private cache folder under root,
// moves m's compiled code into the shared cache under the shell's entry
// name and writes the record. compileErr is the module's own compile
// error; err, what else went wrong.
func (h *Host) record(ctx context.Context, root, marker string, m module, shell []byte) (compileErr, err error) {
	tmp, err := os.MkdirTemp(root, "pi-precompile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cache, err := wazero.NewCompilationCacheWithDir(tmp)
	if err != nil {
		return nil, err
	}
	defer cache.Close(ctx)
	r := wazero.NewRuntimeWithConfig(ctx, runtimeConfig(m.pages).WithCompilationCache(cache))
	defer r.Close(ctx)
	if _, err := r.CompileModule(ctx, m.wasm); err != nil {
		return err, nil
	}
	real, err := filepath.Glob(filepath.Join(tmp, "wazero-*", "*"))
	if err != nil || len(real) != 1 {
		return nil, fmt.Errorf("compiled module: %d cache entries", len(real))
	}
	if _, err := r.CompileModule(ctx, shell); err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	both, err := filepath.Glob(filepath.Join(tmp, "wazero-*", "*"))
	if err != nil || len(both) != 2 {
		return nil, fmt.Errorf("shell: %d cache entries", len(both))
	}
	name := both[0]
	if name == real[0] {
		name = both[1]
	}
	st, err := os.Stat(real[0])
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(tmp, name)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o700); err != nil {
		return nil, err
	}
	if err := os.Rename(real[0], filepath.Join(root, rel)); err != nil {
		return nil, err
	}
	return nil, writeRecord(marker, compileRecord{entry: rel, size: st.Size()})
}
