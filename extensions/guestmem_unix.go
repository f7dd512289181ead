//go:build unix

package extensions

import (
	"context"

	"github.com/tetratelabs/wazero/experimental"
	"golang.org/x/sys/unix"
)

// withGuestMemory gives the guests instantiated with ctx linear memories
// mapped outside the Go heap: the memory's maximum is reserved (address
// space only) when the instance is made, and pages are made accessible as
// memory.grow asks for them. wazero's own memory is a Go slice that each
// growth copies into a larger one (a Go guest grows its memory dozens of
// times while its runtime starts, leaving the old copies to the collector
// and counting the memory into the Go heap's growth target). The limits
// are unchanged: wazero refuses a growth past the memory's maximum before
// it asks, and a growth the system refuses fails memory.grow (-1) as a
// refused Go allocation would have failed the host.
func withGuestMemory(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(newMappedMemory))
}

// mappedMemory is a linear memory in its own mapping: reserved is the
// whole reservation (PROT_NONE past the accessible part), size the
// accessible length.
type mappedMemory struct {
	reserved []byte
	size     uint64
}

// newMappedMemory reserves max bytes; when the system refuses (or max is
// zero or past the address space), the memory is a Go slice as wazero's
// own.
func newMappedMemory(_, max uint64) experimental.LinearMemory {
	if max == 0 || max > 1<<40 {
		return &heapMemory{}
	}
	b, err := unix.Mmap(-1, 0, int(max), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		return &heapMemory{}
	}
	return &mappedMemory{reserved: b}
}

// Reallocate makes the first size bytes accessible and returns them; nil
// past the reservation or when the system refuses.
func (m *mappedMemory) Reallocate(size uint64) []byte {
	if m.reserved == nil || size > uint64(len(m.reserved)) {
		return nil
	}
	if size > m.size {
		if err := unix.Mprotect(m.reserved[m.size:size], unix.PROT_READ|unix.PROT_WRITE); err != nil {
			return nil
		}
		m.size = size
	}
	return m.reserved[:size:size]
}

// Free unmaps the memory once no guest code runs (guestruns.go): wazero
// frees a closed module's memory while a call may still be leaving it.
func (m *mappedMemory) Free() {
	if b := m.reserved; b != nil {
		m.reserved = nil
		whenNoGuestRuns(func() { _ = unix.Munmap(b) })
	}
}

// heapMemory is a linear memory in a Go slice, grown by copying (as
// wazero's own).
type heapMemory struct{ buf []byte }

func (m *heapMemory) Reallocate(size uint64) []byte {
	if size > uint64(cap(m.buf)) {
		b := make([]byte, size, max(size, 2*uint64(cap(m.buf))))
		copy(b, m.buf)
		m.buf = b
	}
	m.buf = m.buf[:size]
	return m.buf
}

func (m *heapMemory) Free() { m.buf = nil }
