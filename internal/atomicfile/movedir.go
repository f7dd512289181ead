package atomicfile

import (
	"io/fs"
	"os"
)

// moveDirChecked is MoveDir in two steps: a look at new, then the rename.
func moveDirChecked(old, new string) error {
	if _, err := os.Lstat(new); err == nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: fs.ErrExist}
	}
	return os.Rename(old, new)
}
