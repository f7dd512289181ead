//go:build !unix

package extensions

import "context"

// withGuestMemory leaves guests' memories to wazero (a Go slice) where
// there is no mmap.
func withGuestMemory(ctx context.Context) context.Context { return ctx }
