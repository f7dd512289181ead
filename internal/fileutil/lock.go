// Package fileutil owns the file helpers the file tools share: the
// process-wide per-file lock that queues mutations of one file (keyed by the
// file a write really lands on, atomicfile.Target), and reading a file into
// a reused buffer up to a bound. The atomic writer is internal/atomicfile.
package fileutil

import (
	"sync"

	"github.com/pi-go/pi/internal/atomicfile"
)

// fileLocks is the per-file mutation queue: one entry per real path while
// someone holds or waits for it. It is process-wide on purpose: two
// runtimes of one process that write one file must queue too.
var fileLocks = struct {
	sync.Mutex
	m map[string]*fileLock
}{m: map[string]*fileLock{}}

type fileLock struct {
	mu   sync.Mutex
	refs int // holders plus waiters
}

// WithLock runs fn while holding the process-wide lock of the file at
// path, so mutations of one file (write, edit) run one after another while
// different files proceed in parallel. The lock is keyed by the resolved real
// path: symlinks are followed, and a file that does not exist yet is keyed by
// its parent's real path plus its name. Waiters are served in no particular
// order.
//
// # Errors
//
// WithLock returns what fn returns.
func WithLock(path string, fn func() error) error {
	key := atomicfile.Target(path)
	fileLocks.Lock()
	l := fileLocks.m[key]
	if l == nil {
		l = &fileLock{}
		fileLocks.m[key] = l
	}
	l.refs++
	fileLocks.Unlock()

	l.mu.Lock()
	defer func() {
		l.mu.Unlock()
		fileLocks.Lock()
		l.refs--
		if l.refs == 0 {
			delete(fileLocks.m, key)
		}
		fileLocks.Unlock()
	}()
	return fn()
}

// LockedFiles reports how many files are locked or waited for (for tests
// and diagnostics).
func LockedFiles() int {
	fileLocks.Lock()
	defer fileLocks.Unlock()
	return len(fileLocks.m)
}
