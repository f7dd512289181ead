//go:build unix

package extensions

import (
	"fmt"
	"os"
	"syscall"
)

// fileIdentity names a file's current version: device, inode, size, and
// modification and change times (a change time cannot be set back by the
// file's owner, so rewriting the file and restoring its mtime still
// changes it).
func fileIdentity(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("stat %s: no device and inode", path)
	}
	return fmt.Sprintf("dev=%d ino=%d size=%d mtime=%d ctime=%d.%d", st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano(), st.Ctim.Sec, st.Ctim.Nsec), nil
}
