package extensions

// ForceFSWalk makes every file lookup of every mount take the component
// walk (the path of kernels without openat2 and of other systems) while on
// is true, and returns a function that restores the previous setting.
func ForceFSWalk(on bool) (restore func()) {
	old := forceWalk.Swap(on)
	return func() { forceWalk.Store(old) }
}

// FileIdentity is fileIdentity, for the lazy-load tests.
var FileIdentity = fileIdentity
