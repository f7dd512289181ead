package extensions

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Names of the ABI v1 exports and imports.
const (
	exportMarker = "pi_abi_v1"
	exportAlloc  = "pi_alloc"
	exportFree   = "pi_free"
	exportCall   = "pi_call"
	exportMemory = "memory"
	exportInit   = "_initialize"
	wasiModule   = "wasi_snapshot_preview1"
	piModule     = "pi"
)

type signature struct {
	params, results []api.ValueType
}

func (s signature) String() string {
	names := func(ts []api.ValueType) string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = api.ValueTypeName(t)
		}
		return "(" + strings.Join(out, ", ") + ")"
	}
	return names(s.params) + " -> " + names(s.results)
}

var (
	i32, i64 = api.ValueTypeI32, api.ValueTypeI64

	// guestExports are the functions every guest must export.
	guestExports = []struct {
		name string
		sig  signature
	}{
		{exportMarker, signature{nil, nil}},
		{exportAlloc, signature{[]api.ValueType{i32}, []api.ValueType{i32}}},
		{exportFree, signature{[]api.ValueType{i32, i32}, nil}},
		{exportCall, signature{[]api.ValueType{i32, i32}, []api.ValueType{i64}}},
	}

	// piImports are the functions of the host module `pi`.
	piImports = map[string]signature{
		"log":       {[]api.ValueType{i32, i32, i32}, nil},
		"emit":      {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
		"host_call": {[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i64}},
		"host_take": {[]api.ValueType{i32, i32}, []api.ValueType{i64}},
	}
)

func sigOf(d api.FunctionDefinition) signature {
	return signature{d.ParamTypes(), d.ResultTypes()}
}

func (s signature) equal(o signature) bool {
	return slices.Equal(s.params, o.params) && slices.Equal(s.results, o.results)
}

// verifyModule checks a compiled module against ABI v1 before it is ever
// instantiated: the marker first (so a non-pi module gets that message), then
// the other exports, then every import.
func verifyModule(m wazero.CompiledModule, wasi map[string]api.FunctionDefinition) error {
	exports := m.ExportedFunctions()
	if _, ok := exports[exportMarker]; !ok {
		return fmt.Errorf("missing export %s: not a pi extension of ABI v1 (the module must export a function %q)", exportMarker, exportMarker)
	}
	if _, cmd := exports["_start"]; cmd {
		if _, lib := exports[exportInit]; !lib {
			return fmt.Errorf("the module is a WASI command (it exports _start and no %s), not a library: rebuild it with -buildmode=c-shared (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o NAME.wasm .), or for C/Rust link it as a reactor (-mexec-model=reactor, --crate-type cdylib)", exportInit)
		}
	}
	for _, want := range guestExports {
		d, ok := exports[want.name]
		if !ok {
			return fmt.Errorf("missing export %s %s (required by ABI v1)", want.name, want.sig)
		}
		if got := sigOf(d); !got.equal(want.sig) {
			return fmt.Errorf("export %s has signature %s, ABI v1 wants %s", want.name, got, want.sig)
		}
	}
	if d, ok := exports[exportInit]; ok {
		if got := sigOf(d); !got.equal(signature{}) {
			return fmt.Errorf("export %s has signature %s, ABI v1 wants () -> ()", exportInit, got)
		}
	}
	if _, ok := m.ExportedMemories()[exportMemory]; !ok {
		return fmt.Errorf("missing export %s (the guest's linear memory)", exportMemory)
	}
	for _, mem := range m.ImportedMemories() {
		mod, name, _ := mem.Import()
		return fmt.Errorf("unknown import %s.%s: the host provides no memory; the module must define and export its own", mod, name)
	}
	for _, d := range m.ImportedFunctions() {
		mod, name, _ := d.Import()
		var want signature
		switch mod {
		case wasiModule:
			w, ok := wasi[name]
			if !ok {
				return fmt.Errorf("unknown import %s.%s: not a WASI preview1 function the host provides", mod, name)
			}
			want = sigOf(w)
		case piModule:
			w, ok := piImports[name]
			if !ok {
				return fmt.Errorf("unknown import %s.%s: the host module pi provides log, emit, host_call and host_take", mod, name)
			}
			want = w
		default:
			return fmt.Errorf("unknown import %s.%s: a guest may import only from %s and pi", mod, name, wasiModule)
		}
		if got := sigOf(d); !got.equal(want) {
			return fmt.Errorf("import %s.%s has signature %s, the host provides %s", mod, name, got, want)
		}
	}
	return nil
}
