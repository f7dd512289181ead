// Package atomicfile is pi's one way to replace a file on disk: the write
// tools, pi.toml edits, trust.json and installed extension modules all go
// through WriteFile, so the rules below hold for every file pi rewrites.
//
//   - A reader or a crash sees the old content or the new, never a mix: the
//     data goes to a temporary file in the same folder, is synced, and is
//     renamed over the target; the folder is synced after the rename.
//   - A symlink stays a symlink: the link is resolved (Target) and its
//     target is written, so a pi.toml or trust.json that is a link into a
//     dotfiles repository is updated there instead of being replaced by a
//     plain file.
//   - An existing file keeps its mode and, where permitted, its owner.
//   - On failure the old file is intact and no temporary file is left.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// tempMarker is in the name of every temporary file WriteFile creates.
const tempMarker = ".pi-tmp-"

// WriteFile replaces the file at path with data so that a reader or a crash
// sees the old file or the new one, never a mix: it writes a temporary file
// in the same folder, syncs it, renames it over the target and syncs the
// folder. A symlink is followed and its target written (the link stays a
// link; see Target). An existing file keeps its mode and, where permitted,
// its owner; a new file gets defaultMode. Missing parent folders are created
// (0o755). Being a rename, the write gives the path a new inode: other hard
// links keep the old content.
//
// # Errors
//
// WriteFile fails when the parent folders cannot be created, the target is a
// directory or another non-regular file, or exists without write permission
// (an *os.PathError with EACCES; a file with no write bit counts as
// read-only even for root), or creating, writing, syncing or renaming the
// temporary file fails. Errors read "write file PATH: ...". On any error the
// old file is intact and no temporary file is left.
func WriteFile(path string, data []byte, defaultMode os.FileMode) error {
	return writeFile(path, defaultMode, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteString is WriteFile for data held in a string, written without
// copying it to a byte slice first (the write tool's content can be tens of
// megabytes).
func WriteString(path string, data string, defaultMode os.FileMode) error {
	return WriteStrings(path, []string{data}, defaultMode)
}

// WriteStrings is WriteFile for data held in pieces: the file is their
// concatenation, written piece by piece without joining them first (an
// edit writes the untouched parts of a large file as they are).
func WriteStrings(path string, pieces []string, defaultMode os.FileMode) error {
	return writeFile(path, defaultMode, func(f *os.File) error {
		for _, p := range pieces {
			if _, err := f.WriteString(p); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeFile is WriteFile with write filling the temporary file.
func writeFile(path string, defaultMode os.FileMode, write func(*os.File) error) error {
	target := Target(path)
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
			return fmt.Errorf("write file %s: %s, not a regular file", path, Kind(fi.Mode()))
		}
		mode = fi.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
		existing = fi
		// A rename would replace a read-only file; refuse as a plain write would.
		if err := CheckWritable(target, fi); err != nil {
			return writeError(path, target, err)
		}
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return writeError(path, target, err)
		}
	default:
		return writeError(path, target, err)
	}

	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+tempMarker+"*")
	if err != nil {
		return writeError(path, target, err)
	}
	tmpName := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmpName)
		return writeError(path, target, err)
	}
	if err := write(tmp); err != nil {
		return fail(err)
	}
	if existing != nil {
		// Keep the owner too (works as root or when nothing changes); a
		// failure leaves the file owned by us, as a plain create would.
		keepOwner(tmp, existing)
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

// maxSymlinkHops bounds how many symlinks Target follows (a loop ends
// there), as the kernel's own limit does.
const maxSymlinkHops = 255

// Target returns where opening path really lands: path made absolute
// (against the process's working directory) and cleaned, then every symlink
// on the way followed, component by component, as the kernel follows them
// (a relative link target is read from the link's real folder). When a
// component does not exist, the remaining names are joined unchanged to the
// real path reached so far: a file not created yet is named by the real
// path of its deepest existing parent plus the rest, and a dangling symlink
// by where its target would be created. After maxSymlinkHops links (a loop)
// the path reached so far is returned with the rest joined to it.
//
// WriteFile writes to Target; locks that serialize writes of one file key
// on it, so that every name of the file shares one lock; and the paths that
// tool_call hooks see are Target of what each tool opens.
func Target(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = filepath.Clean(path)
	}
	sep := string(filepath.Separator)
	vol := filepath.VolumeName(abs)
	resolved := vol + sep
	rest := splitPath(abs[len(vol):])
	hops := 0
	for i := 0; i < len(rest); i++ {
		name := rest[i]
		switch name {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, name)
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, rest[i+1:]...)...)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		link, err := os.Readlink(next)
		if err != nil || hops > maxSymlinkHops {
			return filepath.Join(append([]string{next}, rest[i+1:]...)...)
		}
		if filepath.IsAbs(link) {
			lv := filepath.VolumeName(link)
			resolved = lv + sep
			link = link[len(lv):]
		}
		rest = append(splitPath(link), rest[i+1:]...)
		i = -1
	}
	return resolved
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == filepath.Separator || r == '/' })
}

// CheckWritable reports whether the existing file at path (described by fi)
// may be written: the process must have write access, and a file with no
// write permission bit at all counts as read-only even for root (who would
// otherwise bypass it).
//
// # Errors
//
// An *os.PathError with EACCES, or with what access(2) said.
func CheckWritable(path string, fi os.FileInfo) error {
	if fi.Mode().Perm()&0o222 == 0 {
		return &os.PathError{Op: "access", Path: path, Err: syscall.EACCES}
	}
	if err := canWrite(path); err != nil {
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

// Kind names what a non-regular file is ("named pipe", "socket", ...), for
// messages that refuse to read or write one.
func Kind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "symbolic link"
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
