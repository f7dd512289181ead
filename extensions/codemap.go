//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package extensions

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"reflect"
	"sync"
	"unsafe"
	"weak"

	"github.com/tetratelabs/wazero"
	"golang.org/x/sys/unix"

	"github.com/pi-go/pi/internal/atomicfile"
)

// Handing wazero compiled code mapped from a file.
//
// wazero reads a cached module's compiled code into fresh anonymous
// memory: 16 MB for a Go guest, all of it resident, at every load. It has
// no API to take code from elsewhere, so the code of a module loaded
// through its shell (precompiled.go) is put in by this file: wazero
// compiles the shell (its own few KB of code, cached by wazero as any
// module), and the shell's compiled code and function offsets are then
// replaced with the real module's, mapped read-only and executable from
// pi's code file (below). Only the pages the guest runs become resident.
//
// This reaches into wazero's optimizing compiler's compiled module
// (internal/engine/wazevo: compiledModule.executables.executable and
// functionOffsets, the engine's compiledModules and
// sortedCompiledModules under its mux) by reflection: every field is
// looked up by name and its type checked before it is touched
// (wazevoShape), and anything else (another wazero, the interpreter) is
// refused, so the load compiles the module in full instead. This is the
// same swap wazero itself does when it reads code from its cache
// (deserializeCompiledModule: code anywhere in memory, function offsets
// relative to it; the code is position-independent), done before anything
// is instantiated from the module. The wazero version is pinned in go.mod
// (TestWazeroPinned names this file: re-read wazevo's engine before a bump).

// wazevoLayout is where the fields codemap touches are, found once.
type wazevoLayout struct {
	engineType  reflect.Type // wazevo.engine
	mux         uintptr      // engine.mux (sync.RWMutex)
	compiled    uintptr      // engine.compiledModules (map[ModuleID]*compiledModuleWithCount)
	sorted      uintptr      // engine.sortedCompiledModules ([]*compiledModule)
	mapType     reflect.Type // the compiledModules map's type
	withCount   uintptr      // compiledModuleWithCount.compiledModule (*compiledModule)
	executables uintptr      // compiledModule.executables (*executables)
	executable  uintptr      // executables.executable ([]byte)
	offsets     uintptr      // compiledModule.functionOffsets ([]int)
	catches     uintptr      // compiledModule.catchClauseTable (a slice)
	sourceMap   uintptr      // compiledModule.sourceMap.executableOffsets (a slice)
}

// field is the field name of struct t, when its type passes ok.
func field(t reflect.Type, name string, ok func(reflect.Type) bool) (reflect.StructField, error) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, fmt.Errorf("%s is not a struct", t)
	}
	f, found := t.FieldByName(name)
	if !found || len(f.Index) != 1 || !ok(f.Type) {
		return reflect.StructField{}, fmt.Errorf("%s.%s: not found or of another type", t, name)
	}
	return f, nil
}

func isPtrTo(pkg, name string) func(reflect.Type) bool {
	return func(t reflect.Type) bool {
		return t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && t.Elem().Name() == name && t.Elem().PkgPath() == pkg
	}
}

func isType(want reflect.Type) func(reflect.Type) bool {
	return func(t reflect.Type) bool { return t == want }
}

func isSlice(t reflect.Type) bool { return t.Kind() == reflect.Slice }

const (
	wazeroPkg = "github.com/tetratelabs/wazero"
	wasmPkg   = wazeroPkg + "/internal/wasm"
	wazevoPkg = wazeroPkg + "/internal/engine/wazevo"
)

// wazevoShape checks the fields codemap touches in the engine type et
// (wazevo's *engine) and returns where they are.
func wazevoShape(et reflect.Type) (wazevoLayout, error) {
	var l wazevoLayout
	if !isPtrTo(wazevoPkg, "engine")(et) {
		return l, fmt.Errorf("engine %s is not wazevo's", et)
	}
	e := et.Elem()
	l.engineType = e
	mux, err := field(e, "mux", isType(reflect.TypeFor[sync.RWMutex]()))
	if err != nil {
		return l, err
	}
	cms, err := field(e, "compiledModules", func(t reflect.Type) bool {
		return t.Kind() == reflect.Map && isPtrTo(wazevoPkg, "compiledModuleWithCount")(t.Elem())
	})
	if err != nil {
		return l, err
	}
	wc, err := field(cms.Type.Elem().Elem(), "compiledModule", isPtrTo(wazevoPkg, "compiledModule"))
	if err != nil {
		return l, err
	}
	cmType := wc.Type // *compiledModule
	sorted, err := field(e, "sortedCompiledModules", func(t reflect.Type) bool {
		return t.Kind() == reflect.Slice && t.Elem() == cmType
	})
	if err != nil {
		return l, err
	}
	cm := cmType.Elem()
	exes, err := field(cm, "executables", isPtrTo(wazevoPkg, "executables"))
	if err != nil {
		return l, err
	}
	exe, err := field(exes.Type.Elem(), "executable", isType(reflect.TypeFor[[]byte]()))
	if err != nil {
		return l, err
	}
	offs, err := field(cm, "functionOffsets", isType(reflect.TypeFor[[]int]()))
	if err != nil {
		return l, err
	}
	catches, err := field(cm, "catchClauseTable", isSlice)
	if err != nil {
		return l, err
	}
	sm, err := field(cm, "sourceMap", func(t reflect.Type) bool { return t.Kind() == reflect.Struct })
	if err != nil {
		return l, err
	}
	smOffs, err := field(sm.Type, "executableOffsets", isSlice)
	if err != nil {
		return l, err
	}
	l.mux, l.compiled, l.sorted, l.mapType = mux.Offset, cms.Offset, sorted.Offset, cms.Type
	l.withCount, l.executables, l.executable, l.offsets = wc.Offset, exes.Offset, exe.Offset, offs.Offset
	l.catches, l.sourceMap = catches.Offset, sm.Offset+smOffs.Offset
	return l, nil
}

// wazevoLayouts caches wazevoShape per engine type.
var wazevoLayouts sync.Map // reflect.Type → wazevoLayout or error

func layoutOf(et reflect.Type) (wazevoLayout, error) {
	if v, ok := wazevoLayouts.Load(et); ok {
		if err, bad := v.(error); bad {
			return wazevoLayout{}, err
		}
		return v.(wazevoLayout), nil
	}
	l, err := wazevoShape(et)
	if err != nil {
		wazevoLayouts.Store(et, err)
		return l, err
	}
	wazevoLayouts.Store(et, l)
	return l, nil
}

// mappedModules are the wazevo compiled modules whose code codemap put
// in (by address; the weak pointer tells a module that is gone from a
// new one at the same address): wazero keeps a compiled module in memory
// and hands it to a later compile of the same shell.
var mappedModules struct {
	sync.Mutex
	m map[uintptr]weak.Pointer[byte]
}

// wazevoModule finds wazevo's compiled module behind compiled and locks
// its engine (unlock when done).
func wazevoModule(compiled wazero.CompiledModule) (cm, engine unsafe.Pointer, l wazevoLayout, unlock func(), err error) {
	v := reflect.ValueOf(compiled)
	if !isPtrTo(wazeroPkg, "compiledModule")(v.Type()) {
		return nil, nil, l, nil, fmt.Errorf("compiled module %s is not wazero's", v.Type())
	}
	mod := v.Elem().FieldByName("module")
	ev := v.Elem().FieldByName("compiledEngine")
	if !mod.IsValid() || !isPtrTo(wasmPkg, "Module")(mod.Type()) || !ev.IsValid() || ev.Kind() != reflect.Interface || ev.IsNil() {
		return nil, nil, l, nil, errors.New("wazero's compiled module: no module or engine")
	}
	id := mod.Elem().FieldByName("ID")
	if !id.IsValid() || id.Kind() != reflect.Array {
		return nil, nil, l, nil, errors.New("wazero's module: no ID")
	}
	ev = ev.Elem()
	if l, err = layoutOf(ev.Type()); err != nil {
		return nil, nil, l, nil, err
	}
	if id.Type() != l.mapType.Key() {
		return nil, nil, l, nil, fmt.Errorf("module ID %s does not key %s", id.Type(), l.mapType)
	}
	engine = ev.UnsafePointer()
	mu := (*sync.RWMutex)(unsafe.Add(engine, l.mux))
	mu.Lock()
	cms := reflect.NewAt(l.mapType, unsafe.Add(engine, l.compiled)).Elem()
	wc := cms.MapIndex(id)
	if !wc.IsValid() || wc.IsNil() {
		mu.Unlock()
		return nil, nil, l, nil, errors.New("the compiled module is not in wazero's engine")
	}
	cm = *(*unsafe.Pointer)(unsafe.Add(wc.UnsafePointer(), l.withCount))
	if cm == nil || *(*unsafe.Pointer)(unsafe.Add(cm, l.executables)) == nil {
		mu.Unlock()
		return nil, nil, l, nil, errors.New("wazero's compiled module has no code")
	}
	if reflect.NewAt(reflect.TypeFor[[]byte](), unsafe.Add(cm, l.catches)).Elem().Len() != 0 ||
		reflect.NewAt(reflect.TypeFor[[]byte](), unsafe.Add(cm, l.sourceMap)).Elem().Len() != 0 {
		mu.Unlock()
		return nil, nil, l, nil, errors.New("the compiled module has catch clauses or a source map")
	}
	return cm, engine, l, mu.Unlock, nil
}

// executableOf is the code field of the wazevo compiled module cm.
func executableOf(cm unsafe.Pointer, l wazevoLayout) *[]byte {
	return (*[]byte)(unsafe.Add(*(*unsafe.Pointer)(unsafe.Add(cm, l.executables)), l.executable))
}

// compiledCode calls f with the compiled code of compiled and its
// functions' offsets in it (valid during f only).
func compiledCode(compiled wazero.CompiledModule, f func(code []byte, offsets []int) error) error {
	cm, _, l, unlock, err := wazevoModule(compiled)
	if err != nil {
		return err
	}
	defer unlock()
	return f(*executableOf(cm, l), *(*[]int)(unsafe.Add(cm, l.offsets)))
}

// swapInCode replaces the code of compiled (a shell wazero compiled, with
// as many functions as offsets) with code at offsets (function i starts
// at code[offsets[i]]), before anything is instantiated from it. code
// must come from unix.Mmap: wazero unmaps it when the compiled module is
// gone. On success compiled owns code; on an error (errAlreadyMapped
// included) code is the caller's and compiled is as it was.
func swapInCode(compiled wazero.CompiledModule, code []byte, offsets []int) error {
	if len(code) == 0 {
		return errors.New("no code")
	}
	cm, engine, l, unlock, err := wazevoModule(compiled)
	if err != nil {
		return err
	}
	defer unlock()
	mappedModules.Lock()
	defer mappedModules.Unlock()
	if wp, ok := mappedModules.m[uintptr(cm)]; ok && wp.Value() == (*byte)(cm) {
		return errAlreadyMapped
	}
	exe := executableOf(cm, l)
	offs := (*[]int)(unsafe.Add(cm, l.offsets))
	if len(*offs) != len(offsets) {
		return fmt.Errorf("the shell has %d functions, the code %d", len(*offs), len(offsets))
	}
	sorted := (*[]unsafe.Pointer)(unsafe.Add(engine, l.sorted))
	old := *exe
	if len(old) > 0 {
		i := indexOf(*sorted, cm)
		if i < 0 {
			return errors.New("the compiled shell is not in wazero's sorted list")
		}
		*sorted = append((*sorted)[:i], (*sorted)[i+1:]...)
	}
	*exe = code
	*offs = offsets
	// Back into the list sorted by the code's address.
	base := uintptr(unsafe.Pointer(&code[0]))
	i := 0
	for i < len(*sorted) && uintptr(unsafe.Pointer(unsafe.SliceData(*executableOf((*sorted)[i], l)))) < base {
		i++
	}
	*sorted = append(*sorted, nil)
	copy((*sorted)[i+1:], (*sorted)[i:])
	(*sorted)[i] = cm
	if mappedModules.m == nil {
		mappedModules.m = map[uintptr]weak.Pointer[byte]{}
	}
	for k, wp := range mappedModules.m {
		if wp.Value() == nil {
			delete(mappedModules.m, k)
		}
	}
	mappedModules.m[uintptr(cm)] = weak.Make((*byte)(cm))
	if len(old) > 0 {
		_ = unix.Munmap(old) // wazero's mapping of the shell's code, used by nothing now
	}
	return nil
}

// errAlreadyMapped: the compiled module wazero handed back is one whose
// code codemap put in before (the same shell compiled again in the
// process): nothing to do.
var errAlreadyMapped = errors.New("code already mapped")

func indexOf(s []unsafe.Pointer, p unsafe.Pointer) int {
	for i, q := range s {
		if q == p {
			return i
		}
	}
	return -1
}

// The code file: a module's compiled code as codemap maps it, next to
// its record (CacheDir/pi-compiled/…/SHA256.code):
//
//	0   "pi-code1"
//	8   uint32 number of functions
//	12  uint32 CRC-32C of the code
//	16  uint64 length of the code
//	24  uint64 offset of the code in the file (a multiple of codeAlign)
//	32  the sha256 of the module whose code it is
//	64  uint64 per function: its offset in the code
//	…   zeros up to the code, then the code; the file ends with it.
//
// Numbers are little-endian. The code starts on a boundary of the largest
// page size of the platforms wazero compiles for, so it maps as it is.
const (
	codeMagic = "pi-code1"
	codeAlign = 64 << 10
)

// castagnoli is the CRC table of code files, made on first use (no work
// at init: internal/archtest).
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// writeCodeFile writes the compiled code of compiled (wazero's compile of
// the real module) to path, atomically; size is the file's.
func writeCodeFile(path string, compiled wazero.CompiledModule, sum [32]byte) (size int64, err error) {
	var out []byte
	err = compiledCode(compiled, func(code []byte, offsets []int) error {
		if len(code) == 0 {
			return errors.New("no compiled code")
		}
		at := (64 + 8*len(offsets) + codeAlign - 1) / codeAlign * codeAlign
		out = make([]byte, at, at+len(code))
		copy(out, codeMagic)
		binary.LittleEndian.PutUint32(out[8:], uint32(len(offsets)))
		binary.LittleEndian.PutUint32(out[12:], crc32.Checksum(code, castagnoli()))
		binary.LittleEndian.PutUint64(out[16:], uint64(len(code)))
		binary.LittleEndian.PutUint64(out[24:], uint64(at))
		copy(out[32:], sum[:])
		for i, o := range offsets {
			if o < 0 || o >= len(code) {
				return fmt.Errorf("function %d at %d, past the code", i, o)
			}
			binary.LittleEndian.PutUint64(out[64+8*i:], uint64(o))
		}
		out = append(out, code...)
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := atomicfile.WriteFile(path, out, 0o600); err != nil {
		return 0, err
	}
	return int64(len(out)), nil
}

// mapCodeFile maps the code of the code file at path, which must be the
// file pi wrote (fileIdentity, as recorded) and of the module whose sha256
// is sum, read-only and executable. Its CRC is not checked here (reading
// 16 MB cost more than the rest of the load): pi writes code files by
// rename, never in place, so a file of the recorded identity holds what
// pi wrote. Where the file cannot be mapped executable (a noexec mount),
// the code is copied into anonymous memory as wazero does. The mapping is
// the caller's (unmapCode).
func mapCodeFile(path, identity string, sum [32]byte) (code []byte, offsets []int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if id, err := openIdentity(f); err != nil {
		return nil, nil, err
	} else if id != identity {
		return nil, nil, fmt.Errorf("%s: not the file pi wrote (%s, recorded %s)", path, id, identity)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	var h [64]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	n := uint64(binary.LittleEndian.Uint32(h[8:]))
	crcWant := binary.LittleEndian.Uint32(h[12:])
	codeLen := binary.LittleEndian.Uint64(h[16:])
	at := binary.LittleEndian.Uint64(h[24:])
	if string(h[:8]) != codeMagic || at%codeAlign != 0 || at < 64+8*n || codeLen == 0 || at+codeLen != uint64(size) || codeLen > 1<<32 {
		return nil, nil, fmt.Errorf("%s: not a code file of this pi", path)
	}
	if [32]byte(h[32:64]) != sum {
		return nil, nil, fmt.Errorf("%s: the code of another module", path)
	}
	table := make([]byte, 8*n)
	if _, err := f.ReadAt(table, 64); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	offsets = make([]int, n)
	for i := range offsets {
		o := binary.LittleEndian.Uint64(table[8*i:])
		if o >= codeLen {
			return nil, nil, fmt.Errorf("%s: function %d past the code", path, i)
		}
		offsets[i] = int(o)
	}
	code, err = unix.Mmap(int(f.Fd()), int64(at), int(codeLen), unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE)
	if err == nil {
		splitCode(code)
		return code, offsets, nil
	}
	// Not mappable executable: a copy in anonymous memory, its CRC checked.
	code, err = unix.Mmap(-1, 0, int(codeLen), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, nil, err
	}
	if _, err := f.ReadAt(code, int64(at)); err != nil || crc32.Checksum(code, castagnoli()) != crcWant {
		_ = unix.Munmap(code)
		return nil, nil, fmt.Errorf("%s: the code's checksum does not match", path)
	}
	if err := unix.Mprotect(code, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		_ = unix.Munmap(code)
		return nil, nil, err
	}
	return code, offsets, nil
}

// splitPages is how many pages of code one mapping of it spans
// (splitCode): for protect-paths' first call, 1 page leaves about 6 MB of
// its 16.5 MB of code resident, 2 pages 7.2 MB, 4 pages 8.7 MB, unsplit
// 15.6 MB. Each range is a mapping the kernel keeps (about 4,000 for a Go
// guest, of the 65,530 vm.max_map_count allows by default) and costs a
// madvise (~4 ms for a Go guest).
const splitPages = 1

// splitCode splits the mapping of code into mappings of splitPages pages
// each: the kernel's fault-around maps the pages around each page the
// guest runs (64 KB, within one mapping), which made nearly all of a Go
// guest's code resident when its runtime starts. Neighbouring ranges get
// different access advice (normal, random), so the kernel keeps them
// apart.
func splitCode(code []byte) {
	step := splitPages * os.Getpagesize()
	for at := step; at < len(code); at += 2 * step {
		_ = unix.Madvise(code[at:min(at+step, len(code))], unix.MADV_RANDOM)
	}
}

// unmapCode unmaps what mapCodeFile mapped (when it was not handed to
// wazero).
func unmapCode(code []byte) { _ = unix.Munmap(code) }

// codeMapping says whether compiled code can be handed to wazero here.
const codeMapping = true
