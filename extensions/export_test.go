package extensions

import "github.com/pi-go/pi/extensions/internal/rootfs"

// ForceFSWalk makes every file lookup of every mount take the component
// walk (the path of kernels without openat2 and of other systems) while on
// is true, and returns a function that restores the previous setting.
func ForceFSWalk(on bool) (restore func()) {
	old := rootfs.ForceWalk.Swap(on)
	return func() { rootfs.ForceWalk.Store(old) }
}

// FileIdentity is fileIdentity, for the lazy-load tests.
var FileIdentity = fileIdentity
