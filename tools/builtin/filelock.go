package builtin

import (
	"sync"
)

// fileLocks is the process-wide per-file mutation queue: one entry per real
// path while someone holds or waits for it.
var fileLocks = struct {
	sync.Mutex
	m map[string]*fileLock
}{m: map[string]*fileLock{}}

type fileLock struct {
	mu   sync.Mutex
	refs int // holders plus waiters
}

// WithFileLock runs fn while holding the process-wide lock of the file at
// path, so mutations of one file (write, edit) run one after another while
// different files proceed in parallel. The lock is keyed by the resolved real
// path: symlinks are followed, and a file that does not exist yet is keyed by
// its parent's real path plus its name. Waiters are served in no particular
// order.
//
// # Errors
//
// WithFileLock returns what fn returns.
func WithFileLock(path string, fn func() error) error {
	key := RealPath(path)
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

// fileLockCount reports how many keys the queue holds (for tests).
func fileLockCount() int {
	fileLocks.Lock()
	defer fileLocks.Unlock()
	return len(fileLocks.m)
}
