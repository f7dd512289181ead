package main

import (
	"strings"
	"unsafe"
)

// hideKeyArgs keeps an --api-key value out of the process's command line,
// which /proc/PID/cmdline and ps show to every user of the machine (being
// non-dumpable does not hide it): it returns args with each argument that
// holds such a value copied to new memory, then overwrites the value's
// original bytes, which are the process's own argv, with '*'. Only the
// process's real arguments may be passed (os.Args or a suffix of it):
// their bytes live in writable memory the kernel reads the command line
// from. Anything from the start of the process until this call can still
// see the key; docs/security.md says so and recommends the environment.
func hideKeyArgs(args []string) []string {
	var out []string
	hide := func(i, from int) {
		if from >= len(args[i]) {
			return
		}
		if out == nil {
			out = append([]string(nil), args...)
		}
		out[i] = strings.Clone(args[i])
		b := unsafe.Slice(unsafe.StringData(args[i]), len(args[i]))
		for j := from; j < len(b); j++ {
			b[j] = '*'
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "api-key" {
			continue
		}
		if hasValue {
			hide(i, strings.IndexByte(a, '=')+1)
		} else if i+1 < len(args) {
			i++
			hide(i, 0)
		}
	}
	if out == nil {
		return args
	}
	return out
}
