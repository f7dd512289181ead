//go:build !linux

package builtin

import "github.com/pi-go/pi/internal/fileutil"

// cwdFd is -1 off Linux: readWholeAt opens the whole path, following
// links.
const cwdFd = -1

// readWholeAt reads the file dirAbs+name as fileutil.ReadWhole does (dirfd
// is always -1 off unix).
//
// # Errors
//
// readWholeAt fails when the file cannot be opened or read.
func readWholeAt(_ int, dirAbs, name string, buf []byte, max int64, head int, skip func([]byte) bool) (data []byte, big, skipped bool, err error) {
	return fileutil.ReadWhole(dirAbs+name, buf, max, head, skip)
}

// closeDir does nothing: there are no directory descriptors off Linux.
func closeDir(int) {}
