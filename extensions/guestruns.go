package extensions

import "sync"

// guestRuns counts the guest code running in this process (instantiation
// and calls), so that a guest's linear memory is never unmapped under
// code that uses it: closing a runtime (Host.Close, a timeout) frees its
// modules' memories while their calls may still be on their way out of
// the guest, and a memory mapped outside the Go heap (guestmem_unix.go)
// would then be a crash, not an error. A free asked for while any guest
// code runs waits until none does.
var guestRuns struct {
	mu      sync.Mutex
	n       int
	pending []func()
}

// enterGuest marks guest code running until the matching leaveGuest.
func enterGuest() {
	guestRuns.mu.Lock()
	guestRuns.n++
	guestRuns.mu.Unlock()
}

// leaveGuest ends what enterGuest marked; the last one out runs the frees
// that waited.
func leaveGuest() {
	guestRuns.mu.Lock()
	defer guestRuns.mu.Unlock()
	guestRuns.n--
	if guestRuns.n == 0 {
		for _, free := range guestRuns.pending {
			free()
		}
		guestRuns.pending = nil
	}
}

// whenNoGuestRuns runs free now when no guest code runs, else once none
// does. free runs with the count's lock held: no guest code starts
// meanwhile.
func whenNoGuestRuns(free func()) {
	guestRuns.mu.Lock()
	defer guestRuns.mu.Unlock()
	if guestRuns.n == 0 {
		free()
		return
	}
	guestRuns.pending = append(guestRuns.pending, free)
}
