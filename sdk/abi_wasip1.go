//go:build wasip1

package sdk

import (
	"fmt"
	"unsafe"
)

// pinned keeps every buffer handed to the host reachable (so the garbage
// collector leaves it alone) until the host calls pi_free. Go's collector
// does not move objects, so an address stays valid while it is pinned.
var pinned = map[uint32][]byte{}

func pin(b []byte) uint32 {
	if len(b) == 0 {
		b = make([]byte, 1)
	}
	p := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	pinned[p] = b
	return p
}

//go:wasmexport pi_abi_v1
func piABIv1() {}

//go:wasmexport pi_alloc
func piAlloc(size uint32) uint32 { return pin(make([]byte, size)) }

//go:wasmexport pi_free
func piFree(ptr, size uint32) { delete(pinned, ptr) }

//go:wasmexport pi_call
func piCall(ptr, length uint32) uint64 {
	var resp []byte
	if buf, ok := pinned[ptr]; !ok || int(length) > len(buf) {
		resp = encodeError(fmt.Errorf("pi_call: request at %d (%d bytes) is not a buffer from pi_alloc", ptr, length))
	} else {
		resp = std.handle(buf[:length])
	}
	return uint64(pin(resp))<<32 | uint64(len(resp))
}

//go:wasmimport pi log
func piLog(level int32, msg string)

//go:wasmimport pi emit
func piEmit(payload string) int32

//go:wasmimport pi host_call
func piHostCall(req string, out unsafe.Pointer, outCap uint32) int64

//go:wasmimport pi host_take
func piHostTake(out unsafe.Pointer, outCap uint32) int64

func hostLog(level Level, msg string) { piLog(int32(level), msg) }

func hostEmit(payload []byte) bool { return piEmit(string(payload)) == 1 }

// callBuf receives host_call answers; larger ones are fetched with host_take.
var callBuf = make([]byte, 64<<10)

func hostCall(req []byte) ([]byte, error) {
	n := piHostCall(string(req), unsafe.Pointer(unsafe.SliceData(callBuf)), uint32(len(callBuf)))
	if n < 0 {
		return nil, fmt.Errorf("host_call refused the request (code %d)", n)
	}
	if n <= int64(len(callBuf)) {
		return append([]byte(nil), callBuf[:n]...), nil
	}
	big := make([]byte, n)
	m := piHostTake(unsafe.Pointer(unsafe.SliceData(big)), uint32(n))
	if m != n {
		return nil, fmt.Errorf("host_take returned %d, want %d", m, n)
	}
	return big, nil
}
