package atomicfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// MoveDir renames the folder old to new when nothing is at new: it never
// replaces what is there (rename(2) would replace an empty folder), and
// answers an error satisfying errors.Is(err, fs.ErrExist) then. Linux
// makes the check and the rename one step (RENAME_NOREPLACE).
func MoveDir(old, new string) error {
	err := unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) { // a file system without the flag
		return moveDirChecked(old, new)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	return nil
}
