package extensions

// ShellLoads is how many loads took their compiled code through a shell
// (precompiled.go).
func ShellLoads() int64 { return shellLoads.Load() }
