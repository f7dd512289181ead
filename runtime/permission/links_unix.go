//go:build unix

package permission

import (
	"os"
	"syscall"
)

// identity is a file's device and inode and its number of links.
func identity(info os.FileInfo) (id fileID, nlink uint64, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, 0, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, uint64(st.Nlink), true
}
