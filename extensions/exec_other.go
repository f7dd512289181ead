//go:build !unix

package extensions

import "os/exec"

// runContained runs the command newCmd makes; where there are no sessions
// or process groups the context still kills the direct child.
func runContained(newCmd func() *exec.Cmd) error { return newCmd().Run() }
