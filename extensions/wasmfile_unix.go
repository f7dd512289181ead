//go:build unix

package extensions

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// readWasm reads the module file at path into memory of its own, outside
// the Go heap, which release (once or more) gives back to the system at once (a Go
// guest is 4 MB, read at every first load in a process and garbage once
// the module is compiled: in the Go heap it stayed resident and raised
// the heap's growth target during the guest's start). It is a copy, not
// a mapping of the file: the bytes whose sha256 is checked are the bytes
// compiled, whatever happens to the file meanwhile.
func readWasm(path string) (wasm []byte, release func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size <= 0 || size > 1<<31 || !st.Mode().IsRegular() {
		b, err := io.ReadAll(f)
		return b, func() {}, err
	}
	buf, err := unix.Mmap(-1, 0, int(size)+1, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		b, err := io.ReadAll(f)
		return b, func() {}, err
	}
	// One byte more than the size: a file that grew since is read whole
	// by ReadAll below instead.
	n, err := io.ReadFull(f, buf)
	if err == nil || n > int(size) {
		_ = unix.Munmap(buf)
		b, err := os.ReadFile(path)
		return b, func() {}, err
	}
	if err != io.ErrUnexpectedEOF {
		_ = unix.Munmap(buf)
		return nil, nil, err
	}
	released := false
	return buf[:n:n], func() {
		if !released {
			released = true
			_ = unix.Munmap(buf)
		}
	}, nil
}
