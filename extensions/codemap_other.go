//go:build !((linux || darwin || freebsd) && (amd64 || arm64))

package extensions

import (
	"errors"

	"github.com/tetratelabs/wazero"
)

// Without mapped code (codemap.go), a module compiled into the cache is
// compiled in full at each load (wazero still finds its code in its cache).

const codeMapping = false

var errNoCodeMapping = errors.New("compiled code is not mapped on this platform")

func writeCodeFile(string, wazero.CompiledModule, [32]byte) (int64, error) {
	return 0, errNoCodeMapping
}

func mapCodeFile(string, string, [32]byte) ([]byte, []int, error) { return nil, nil, errNoCodeMapping }

func unmapCode([]byte) {}

func swapInCode(wazero.CompiledModule, []byte, []int) error { return errNoCodeMapping }

var errAlreadyMapped = errors.New("code already mapped")
