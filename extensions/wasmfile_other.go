//go:build !unix

package extensions

import "os"

// scratchBuffer is n bytes in the Go heap (wasmfile_unix.go maps them
// outside it).
func scratchBuffer(n int) (buf []byte, free func()) { return make([]byte, n), func() {} }

// readWasm reads the module file at path (wasmfile_unix.go reads it
// outside the Go heap).
func readWasm(path string) (wasm []byte, release func(), err error) {
	b, err := os.ReadFile(path)
	return b, func() {}, err
}
