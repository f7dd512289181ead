//go:build !unix

package checkpoint

import "io/fs"

// inode is 0 where the system gives none.
func inode(fs.FileInfo) uint64 { return 0 }
