//go:build unix

package extensions

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// fileIdentity names a file's current version: device, inode, size, and
// modification and change times (a change time cannot be set back by the
// file's owner, so rewriting the file and restoring its mtime still
// changes it).
func fileIdentity(path string) (string, error) {
	var st unix.Stat_t // x/sys/unix names the change time Ctim on every Unix
	if err := unix.Stat(path, &st); err != nil {
		return "", &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return identityOf(&st), nil
}

// openIdentity is fileIdentity of the open file f.
func openIdentity(f *os.File) (string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return "", &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return identityOf(&st), nil
}

func identityOf(st *unix.Stat_t) string {
	return fmt.Sprintf("dev=%d ino=%d size=%d mtime=%d ctime=%d.%d", st.Dev, st.Ino, st.Size, unix.TimespecToNsec(st.Mtim), st.Ctim.Sec, st.Ctim.Nsec)
}
