//go:build !linux

package builtin

import "time"

// sandboxServerCPU is zero off Linux: there are no fork servers.
func sandboxServerCPU() time.Duration { return 0 }
