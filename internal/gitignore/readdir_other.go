//go:build !linux

package gitignore

import "os"

// readDir lists the directory abs, sorted by name (os.ReadDir). It never
// keeps the directory open: fd is always -1.
func readDir(abs string, _ *[]byte, _ bool) (_ []dirEntry, fd int, _ error) {
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
