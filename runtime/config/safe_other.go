//go:build !unix

package config

import "os"

// checkFileSafe has no owner or mode bits to check on this system.
func checkFileSafe(file, what string, fi os.FileInfo) error { return nil }
