//go:build unix

package extensions

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// scratchBuffer is n bytes of memory of their own, outside the Go heap,
// which free (once or more) gives back to the system at once; only the
// pages written become resident. For the big buffers of a load that are
// garbage once the module is compiled (the module file, its shell: MBs
// for a Go guest): in the Go heap they stayed resident and raised the
// heap's growth target during the guest's start. Nothing may keep a slice
// of buf past free.
func scratchBuffer(n int) (buf []byte, free func()) {
	if n <= 0 {
		return nil, func() {}
	}
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]byte, n), func() {}
	}
	freed := false
	return b, func() {
		if !freed {
			freed = true
			_ = unix.Munmap(b)
		}
	}
}

// readWasm reads the module file at path into a scratchBuffer, which
// release gives back. It is a copy, not a mapping of the file: the bytes
// whose sha256 is checked are the bytes compiled, whatever happens to the
// file meanwhile.
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
	// One byte more than the size: a file that grew since is read whole
	// by ReadFile instead.
	buf, free := scratchBuffer(int(size) + 1)
	n, err := io.ReadFull(f, buf)
	if err == nil || n > int(size) {
		free()
		b, err := os.ReadFile(path)
		return b, func() {}, err
	}
	if err != io.ErrUnexpectedEOF {
		free()
		return nil, nil, err
	}
	return buf[:n:n], free, nil
}
