//go:build !linux

package atomicfile

// MoveDir renames the folder old to new when nothing is at new: it never
// replaces what is there, and answers an error satisfying
// errors.Is(err, fs.ErrExist) then. Off Linux the check and the rename are
// two steps.
func MoveDir(old, new string) error { return moveDirChecked(old, new) }
