//go:build !unix

package extensions

import "os"

// readWasm reads the module file at path (wasmfile_unix.go reads it
// outside the Go heap).
func readWasm(path string) (wasm []byte, release func(), err error) {
	b, err := os.ReadFile(path)
	return b, func() {}, err
}
