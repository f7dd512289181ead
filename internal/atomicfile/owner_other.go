//go:build !unix

package atomicfile

import "os"

// keepOwner does nothing where files have no Unix owner.
func keepOwner(*os.File, os.FileInfo) {}

// canWrite opens path for writing (without changing it) to learn whether
// this process may write it.
func canWrite(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}
