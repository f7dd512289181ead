package builtin

import (
	"os"

	"github.com/pi-go/pi/internal/atomicfile"
)

// WriteFileAtomic replaces the file at path with data through
// atomicfile.WriteFile, pi's one atomic writer: a reader or a crash sees the
// old file or the new one; a symlink is followed and stays a link; an
// existing file keeps its mode and, where permitted, its owner; a new file
// gets defaultMode; missing parent folders are created.
//
// # Errors
//
// Those of atomicfile.WriteFile; on any error the old file is intact and no
// temporary file is left.
func WriteFileAtomic(path string, data []byte, defaultMode os.FileMode) error {
	return atomicfile.WriteFile(path, data, defaultMode)
}

// checkWritable is atomicfile.CheckWritable: the edit tool refuses up front
// what the writer would refuse.
func checkWritable(path string, fi os.FileInfo) error {
	return atomicfile.CheckWritable(path, fi)
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
