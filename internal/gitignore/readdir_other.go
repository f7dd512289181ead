//go:build !linux

package gitignore

import "os"

// readDir lists the directory abs, sorted by name (os.ReadDir). It never
// keeps the directory open: fd is always -1. With nofollow, abs must not
// be a symbolic link (checked with lstat before the listing: weaker than
// Linux's O_NOFOLLOW, which leaves no gap); parent is not used.
func readDir(abs string, _ *[]byte, _, nofollow bool, _ int) (_ []dirEntry, fd int, _ error) {
	if nofollow {
		if fi, err := os.Lstat(abs); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return nil, -1, &os.PathError{Op: "open", Path: abs, Err: os.ErrNotExist}
		}
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, -1, err
	}
	out := make([]dirEntry, len(entries))
	for i, e := range entries {
		out[i] = dirEntry{name: e.Name(), typ: e.Type()}
	}
	return out, -1, nil
}
