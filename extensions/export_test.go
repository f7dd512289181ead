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

// SetMaxKVEntries lowers the entry cap of kv stores for a test (the real
// cap takes 10,000 durable writes to reach); it returns the restore.
func SetMaxKVEntries(n int64) (restore func()) {
	old := maxKVEntries
	maxKVEntries = n
	return func() { maxKVEntries = old }
}

// KVListings is how many times a kv store's folder was listed to count it.
func KVListings() int64 { return kvListings.Load() }

// CheckInitResult decodes and checks an init result as the host does.
func CheckInitResult(raw []byte) error {
	_, err := decodeInit(raw)
	return err
}
