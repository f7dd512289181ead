package builtin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// WriteFileAtomic replaces the file at path with data so that a reader or a
// crash sees the old file or the new one, never a mix: it writes a temporary
// file in the same folder, syncs it, and renames it over the target. A
// symlink is followed and its target written (the link stays a link). An
// existing file keeps its mode and, where permitted, its owner; a new file
// gets defaultMode. Missing parent folders are created. Being a rename, the
// write gives the path a new inode: other hard links keep the old content.
//
// # Errors
//
// WriteFileAtomic fails when the parent folders cannot be created, the target
// is a directory or another non-regular file, or exists without write permission (an *os.PathError with
// EACCES), or creating, writing, syncing or renaming the temporary file
// fails. On any error the old file is intact and no temporary file is left.
func WriteFileAtomic(path string, data []byte, defaultMode os.FileMode) error {
	target := RealPath(path)
	dir := filepath.Dir(target)
	mode := defaultMode.Perm()
	var existing os.FileInfo
	fi, err := os.Stat(target)
	switch {
	case err == nil:
		if fi.IsDir() {
			return fmt.Errorf("write file %s: is a directory", path)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("write file %s: %s, not a regular file", path, fileKind(fi.Mode()))
		}
		mode = fi.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
		existing = fi
		// A rename would replace a read-only file; refuse as a plain write would.
		if err := checkWritable(target, fi); err != nil {
			return writeError(path, target, err)
		}
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return writeError(path, target, err)
		}
	default:
		return writeError(path, target, err)
	}

	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".pi-tmp-*")
	if err != nil {
		return writeError(path, target, err)
	}
	tmpName := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmpName)
		return writeError(path, target, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if existing != nil {
		// Keep the owner too (works as root or when nothing changes); a
		// failure leaves the file owned by us, as a plain create would.
		if st, ok := existing.Sys().(*syscall.Stat_t); ok {
			_ = tmp.Chown(int(st.Uid), int(st.Gid))
		}
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmpName)
		return writeError(path, target, err)
	}
	if err := os.Rename(tmpName, target); err != nil {
		os.Remove(tmpName)
		return writeError(path, target, err)
	}
	syncDir(dir)
	return nil
}

// checkWritable reports whether the existing file may be written: the
// process must have write access, and a file with no write permission bit
// at all counts as read-only even for root (who would otherwise bypass it).
// The error is an *os.PathError with EACCES (or what access(2) said).
func checkWritable(path string, fi os.FileInfo) error {
	if fi.Mode().Perm()&0o222 == 0 {
		return &os.PathError{Op: "access", Path: path, Err: syscall.EACCES}
	}
	if err := unix.Access(path, unix.W_OK); err != nil {
		return &os.PathError{Op: "access", Path: path, Err: err}
	}
	return nil
}

// writeError wraps err as "write file PATH: ...", dropping the path an
// *os.PathError repeats when it is the target's.
func writeError(path, target string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path == target {
		err = pe.Err
	}
	return fmt.Errorf("write file %s: %w", path, err)
}

// fileKind names what a non-regular file is, for messages.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// syncDir makes a rename in dir durable; failures are ignored because the
// data itself is already synced and some file systems refuse directory sync.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
