package builtin

import (
	"os"
	"path/filepath"
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
	key := realPath(path)
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

// realPath resolves path to an absolute path with every symlink followed. A
// missing file (or a dangling symlink's missing target) is resolved through
// its parent folder; what cannot be resolved at all stays as the cleaned
// absolute path.
func realPath(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		p = filepath.Clean(path)
	}
	for range 40 { // the usual limit on symlink hops
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		fi, err := os.Lstat(p)
		if err != nil {
			dir, base := filepath.Split(p)
			if dir == p || base == "" {
				return p
			}
			return filepath.Join(realPath(filepath.Clean(dir)), base)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return p
		}
		target, err := os.Readlink(p)
		if err != nil {
			return p
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	return p
}
