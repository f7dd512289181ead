//go:build !unix

package extensions

import "os/exec"

// killGroup is a no-op where process groups do not exist; the context still
// kills the direct child.
func killGroup(cmd *exec.Cmd) {}
