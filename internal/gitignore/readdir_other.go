//go:build !linux

package gitignore

import "os"

// readDir lists the directory abs, sorted by name (os.ReadDir).
func readDir(abs string, _ *[]byte) ([]dirEntry, error) {
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	out := make([]dirEntry, len(entries))
	for i, e := range entries {
		out[i] = dirEntry{name: e.Name(), typ: e.Type()}
	}
	return out, nil
}
