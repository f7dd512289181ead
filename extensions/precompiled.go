package extensions

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"golang.org/x/sys/cpu"

	"github.com/pi-go/pi/internal/atomicfile"
)

// Loading a module from the compilation cache.
//
// wazero's CompileModule decodes and validates a whole module before it
// looks in its compilation cache: for a Go guest of 4 MB that is most of a
// warm load (~60 ms of ~90 ms of CPU). The validation of the function
// bodies is what costs, and wazero has no switch to skip it. Then it reads
// the module's compiled code (16 MB for a Go guest) into fresh memory, all
// of it resident. So a module compiled with the cache is loaded back
// through its *shell*: the same module with every function body replaced
// by `unreachable` (types, imports, functions, tables, memory, globals,
// exports, elements, data and custom sections unchanged), plus a custom
// section naming the real module's sha256. The shell decodes and
// validates in a few milliseconds; the compiled code it runs is the real
// module's:
//
//   - On a compile (a module this cache has no record of), the real module
//     is compiled and validated in full, as always, by a runtime of the
//     same configuration without a cache, and its compiled code and
//     function offsets are written to a code file (codemap.go) next to a
//     record (CacheDir/pi-compiled/VERSION-ARCH-OS/SHA256, see
//     compiledMarker) that keeps the code file's size and the CPU it was
//     compiled for and the code file's identity.
//   - A later load with the record maps the code file (if it is still the
//     file pi wrote), has wazero compile the shell (wazero caches the shell's
//     own few KB of code like any module's) and puts the mapped code in
//     place of the shell's before anything is instantiated (swapInCode).
//     A record of another format or CPU, a code file of another identity
//     or of another module, or a shell whose functions do not match the code is not
//     used: the module is compiled and recorded again.
//
// A shell names the real module's sha256, so two modules that differ only
// in their code have different shells (and wazero modules). The cache
// folder is trusted as before: whoever can write it can already give
// wazero native code to run (runtime/config.TrustedCacheDir checks it);
// pi writes the code file by rename, never in place, so a mapped file
// does not change under a running guest.

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
//
// The shell is appended to out[:0] (a buffer of shellCap(wasm) bytes
// takes it whole; nil or a smaller one is grown as append does).
func shellOf(wasm []byte, sum string, out []byte) ([]byte, error) {
	digest, err := hex.DecodeString(sum)
	if err != nil || len(digest) != 32 {
		return nil, fmt.Errorf("bad sha256 %q", sum)
	}
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly module")
	}
	out = append(out[:0], wasm[:8]...)
	p := 8
	codeSeen := false
	var memory []byte  // the memory section's contents
	dataCount := false // a data count section: code may name segments
	for p < len(wasm) {
		id := wasm[p]
		size, n := binary.Uvarint(wasm[p+1:])
		if n <= 0 || size > uint64(len(wasm)-(p+1+n)) {
			return nil, fmt.Errorf("section at offset %d: bad size", p)
		}
		start, end := p+1+n, p+1+n+int(size)
		switch id {
		case 5:
			memory = wasm[start:end]
		case 12:
			dataCount = true
		case 11: // data: joined when it can be (it comes after the others)
			if !dataCount {
				if merged, ok := appendMergedData(out, wasm[start:end], memory); ok {
					out = merged
					p = end
					continue
				}
			}
		case 10: // code: every body replaced
			if codeSeen {
				return nil, errors.New("two code sections")
			}
			codeSeen = true
			count, m := binary.Uvarint(wasm[start:end])
			if m <= 0 || count > uint64(end-start) {
				return nil, fmt.Errorf("code section at offset %d: bad count", p)
			}
			// Each body must be walkable, so the shell has as many
			// functions as the module.
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
			out = append(out, 10)
			out = binary.AppendUvarint(out, uint64(uvarintLen(count))+4*count)
			out = binary.AppendUvarint(out, count)
			for i := uint64(0); i < count; i++ {
				// size 3: no locals, unreachable, end
				out = append(out, 3, 0, 0x00, 0x0b)
			}
			p = end
			continue
		}
		out = append(out, wasm[p:end]...)
		p = end
	}
	out = append(out, 0)
	out = binary.AppendUvarint(out, uint64(1+len(shellSection)+len(digest)))
	out = binary.AppendUvarint(out, uint64(len(shellSection)))
	out = append(out, shellSection...)
	return append(out, digest...), nil
}

// shellCap is how long the shell of wasm can be: the module, the zeros
// appendMergedData may add between its data segments (mergeGap at most
// per segment) and the shell's section.
func shellCap(wasm []byte) int {
	extra := 64 + len(shellSection)
	for p := 8; p < len(wasm); {
		size, n := binary.Uvarint(wasm[p+1:])
		if n <= 0 || size > uint64(len(wasm)-(p+1+n)) {
			break
		}
		start := p + 1 + n
		if wasm[p] == 11 {
			if count, k := binary.Uvarint(wasm[start : start+int(size)]); k > 0 && count <= size {
				extra += int(count) * mergeGap
			}
		}
		p = start + int(size)
	}
	return len(wasm) + extra
}

// uvarintLen is the length of v as an unsigned LEB128 number.
func uvarintLen(v uint64) int { return len(binary.AppendUvarint(make([]byte, 0, 10), v)) }

// compileRecord is what a record says: the size of the code file
// (marker + ".code"), the CPU the code was compiled for and the code
// file's identity (fileIdentity: device, inode, size, times) as pi wrote
// it.
type compileRecord struct {
	size     int64
	cpu      string // cpuFingerprint of the machine that compiled it
	identity string
}

// shellFormat names the way shellOf builds shells and the code file is
// laid out: a record of another format is not used. Change it with
// shellOf or the code file.
const shellFormat = "3"

// cpuFingerprint names the CPU features x/sys/cpu sees, which the
// compiled code may use: a cache folder shared by machines of different
// CPUs has a record made on another CPU, which is not used.
var cpuFingerprint = sync.OnceValue(func() string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%+v %+v %+v", cpu.X86, cpu.ARM64, cpu.Initialized))
	return hex.EncodeToString(sum[:8])
})

// readRecord reads the record at path. An empty, malformed or older
// record (an older pi's) is no record.
func readRecord(path string) (compileRecord, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return compileRecord{}, false
	}
	f := strings.Fields(string(b))
	if len(f) < 4 || f[0] != "shell"+shellFormat {
		return compileRecord{}, false
	}
	size, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || size <= 0 {
		return compileRecord{}, false
	}
	return compileRecord{size: size, cpu: f[2], identity: strings.Join(f[3:], " ")}, true
}

// writeRecord writes the record at path (atomicfile: a reader sees the old
// record or the new one).
func writeRecord(path string, rec compileRecord) error {
	return atomicfile.WriteString(path, fmt.Sprintf("shell%s %d %s %s\n", shellFormat, rec.size, rec.cpu, rec.identity), 0o600)
}

// removeOldEntry removes the wazero cache entry an older pi's record at
// path named ("shell2 wazero-…/HEX SIZE CPU": the real module's code under
// its shell's name, 16 MB for a Go guest), which nothing reads now.
func removeOldEntry(root, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	f := strings.Fields(string(b))
	if len(f) != 4 || f[0] != "shell2" {
		return
	}
	dir, file, ok := strings.Cut(f[1], "/")
	if !ok || !strings.HasPrefix(dir, "wazero-") || strings.ContainsAny(dir, `\.`) || len(file) != 64 {
		return
	}
	if _, err := hex.DecodeString(file); err != nil {
		return
	}
	_ = os.Remove(filepath.Join(root, dir, file))
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

// compileRecorded loads m through its shell with its recorded code when
// the cache has a record of it; ok is false (and nothing is left open)
// when it has none or the record, its code file or the shell does not
// fit.
func (h *Host) compileRecorded(ctx context.Context, hr *hostRuntime, m module) (wazero.CompiledModule, bool) {
	marker := h.compiledMarker(m.sha256)
	if !codeMapping || h.cacheRoot() == "" || marker == "" {
		return nil, false
	}
	rec, ok := readRecord(marker)
	if !ok || rec.cpu != cpuFingerprint() {
		return nil, false
	}
	digest, err := hex.DecodeString(m.sha256)
	if err != nil || len(digest) != 32 {
		return nil, false
	}
	code, offsets, err := mapCodeFile(marker+".code", rec.identity, [32]byte(digest))
	if err != nil {
		h.logger.Debug("recorded code not used", "path", m.path, "error", err)
		return nil, false
	}
	// The shell (2.3 MB for a Go guest) is garbage once compiled (wazero
	// copies what it keeps): built outside the Go heap, given back at once.
	buf, free := scratchBuffer(shellCap(m.wasm))
	shell, err := shellOf(m.wasm, m.sha256, buf)
	if err != nil {
		free()
		unmapCode(code)
		return nil, false
	}
	compiled, err := hr.r.CompileModule(ctx, shell)
	free()
	if err != nil {
		unmapCode(code)
		return nil, false
	}
	switch err := swapInCode(compiled, code, offsets); {
	case errors.Is(err, errAlreadyMapped):
		// The same shell was loaded before in this process: wazero
		// handed back that compiled module, whose code is this code.
		unmapCode(code)
	case err != nil:
		h.logger.Debug("recorded code not used", "path", m.path, "error", err)
		unmapCode(code)
		_ = compiled.Close(ctx)
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
	if !codeMapping {
		// wazero's cache holds the code; the marker (no record) says the
		// module is compiled, for compileNoticed.
		compiled, err := hr.r.CompileModule(ctx, m.wasm)
		if err == nil && os.MkdirAll(filepath.Dir(marker), 0o700) == nil {
			_ = atomicfile.WriteString(marker, "compiled\n", 0o600)
		}
		return compiled, err
	}
	if compileErr, err := h.record(ctx, root, marker, m); compileErr != nil {
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

// record compiles m in full in a runtime of its configuration without a
// cache, writes its code file and then the record. compileErr is the
// module's own compile error; err, what else went wrong.
func (h *Host) record(ctx context.Context, root, marker string, m module) (compileErr, err error) {
	r := wazero.NewRuntimeWithConfig(ctx, runtimeConfig(m.pages))
	defer r.Close(ctx)
	compiled, err := r.CompileModule(ctx, m.wasm)
	if err != nil {
		return err, nil
	}
	defer compiled.Close(ctx)
	if err := os.MkdirAll(filepath.Dir(marker), 0o700); err != nil {
		return nil, err
	}
	digest, err := hex.DecodeString(m.sha256)
	if err != nil || len(digest) != 32 {
		return nil, fmt.Errorf("bad sha256 %q", m.sha256)
	}
	size, err := writeCodeFile(marker+".code", compiled, [32]byte(digest))
	if err != nil {
		return nil, err
	}
	id, err := fileIdentity(marker + ".code")
	if err != nil {
		return nil, err
	}
	removeOldEntry(root, marker)
	return nil, writeRecord(marker, compileRecord{size: size, cpu: cpuFingerprint(), identity: id})
}

// mergeGap is the longest run of zeros mergeData writes between two
// segments it joins.
const mergeGap = 64

// appendMergedData appends to out a data section (id, size, contents)
// that fills the memory as the section whose contents are data does, in
// fewer segments: active segments of memory 0 at constant offsets are
// joined when the next starts at most mergeGap bytes after the previous
// ends (the bytes between are zeros, as the memory is before its data is
// written). A Go guest has tens of thousands of segments, each decoded,
// validated and applied by wazero on every load. ok is false (out as it
// was; keep the section as it is) unless every segment is such a segment
// and lies within the memory's initial size (memory is the memory
// section's contents), so no instantiation that failed on a segment
// succeeds or fails on another one. Code cannot name segments without a
// data count section, which the caller checks.
func appendMergedData(out, data, memory []byte) (_ []byte, ok bool) {
	// memory: count 1, limits flag 0 or 1 (not shared, 32-bit), min.
	if len(memory) < 3 || memory[0] != 1 || memory[1] > 1 {
		return out, false
	}
	minPages, n := binary.Uvarint(memory[2:])
	if n <= 0 || minPages > 65536 {
		return out, false
	}
	limit := minPages * 65536
	count, n := binary.Uvarint(data)
	if n <= 0 || count == 0 || count > uint64(len(data)) {
		return out, false
	}
	// Pass 1: the segments, and where runs of them start.
	type segment struct {
		at, start, size uint32 // memory offset; bytes in data
		joins           bool   // continues the previous run
	}
	segs := make([]segment, 0, count)
	p := n
	var end uint64 // where the previous segment ends in memory
	for i := uint64(0); i < count; i++ {
		// flag 0, i32.const OFFSET, end, size, bytes
		if p+2 > len(data) || data[p] != 0 || data[p+1] != 0x41 {
			return out, false
		}
		off, k := readSLEB32(data[p+2:])
		if k <= 0 || p+2+k >= len(data) || data[p+2+k] != 0x0b {
			return out, false
		}
		p += 2 + k + 1
		size, k := binary.Uvarint(data[p:])
		if k <= 0 || size > uint64(len(data)-p-k) {
			return out, false
		}
		p += k
		at := uint64(uint32(off))
		if at+size > limit {
			return out, false
		}
		joins := i > 0 && at >= end && at-end <= mergeGap
		segs = append(segs, segment{at: uint32(at), start: uint32(p), size: uint32(size), joins: joins})
		p += int(size)
		end = at + size
	}
	if p != len(data) {
		return out, false
	}
	// The runs' sizes, then the section's.
	runs, body := 0, 0
	for i := 0; i < len(segs); {
		j, size := i+1, uint64(segs[i].size)
		for ; j < len(segs) && segs[j].joins; j++ {
			size = uint64(segs[j].at) + uint64(segs[j].size) - uint64(segs[i].at)
		}
		runs++
		body += 2 + len(appendSLEB32(nil, int32(segs[i].at))) + 1 + uvarintLen(size) + int(size)
		i = j
	}
	body += uvarintLen(uint64(runs))
	// Pass 2: the section.
	out = append(out, 11)
	out = binary.AppendUvarint(out, uint64(body))
	out = binary.AppendUvarint(out, uint64(runs))
	var zeros [mergeGap]byte
	for i := 0; i < len(segs); {
		j, size := i+1, uint64(segs[i].size)
		for ; j < len(segs) && segs[j].joins; j++ {
			size = uint64(segs[j].at) + uint64(segs[j].size) - uint64(segs[i].at)
		}
		out = append(out, 0, 0x41)
		out = appendSLEB32(out, int32(segs[i].at))
		out = append(out, 0x0b)
		out = binary.AppendUvarint(out, size)
		for k := i; k < j; k++ {
			if k > i {
				prevEnd := segs[k-1].at + segs[k-1].size
				out = append(out, zeros[:segs[k].at-prevEnd]...)
			}
			out = append(out, data[segs[k].start:segs[k].start+segs[k].size]...)
		}
		i = j
	}
	return out, true
}

// readSLEB32 reads a signed LEB128 number of at most 32 bits (5 bytes);
// n is 0 when b does not start with one.
func readSLEB32(b []byte) (v int32, n int) {
	var x int64
	var shift uint
	for n < len(b) && n < 5 {
		c := b[n]
		n++
		x |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				x |= -1 << shift
			}
			if x < -1<<31 || x > 1<<31-1 {
				return 0, 0
			}
			return int32(x), n
		}
	}
	return 0, 0
}

// appendSLEB32 appends v as a signed LEB128 number.
func appendSLEB32(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && c&0x40 == 0) || (x == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
