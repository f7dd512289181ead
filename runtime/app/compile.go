package app

import (
	"path/filepath"
	"time"

	"github.com/pi-go/pi/extensions"
)

// CompileProgress is told when loading a module means compiling it (it is
// not in the compilation cache: seconds for a Go guest), with the module's
// file name, before the wait; the function it returns (nil for none) is
// called when the compile ends, with how long it took and its error. Front
// ends show a progress line ("compiling loc.wasm (first load only)…").
type CompileProgress func(file string) (done func(elapsed time.Duration, err error))

// compileNoticeAfter is how long a compile runs before CompileProgress is
// told: a module in the cache compiles in milliseconds and is not shown.
// Tests set it to 0 (export_test.go).
var compileNoticeAfter = 300 * time.Millisecond

// withCompileProgress sets o's compile notice from p (nothing for nil).
func withCompileProgress(o extensions.Options, p CompileProgress) extensions.Options {
	if p == nil {
		return o
	}
	o.OnCompile = func(path string) func(time.Duration, error) { return p(filepath.Base(path)) }
	o.CompileNoticeAfter = compileNoticeAfter
	return o
}

// lazyDir keeps the extensions' lazy-load records: $PI_HOME/cache/lazy
// ("" without a PI_HOME: every load is eager).
func (r *Runtime) lazyDir() string {
	if r.piHome == "" {
		return ""
	}
	return filepath.Join(r.piHome, "cache", "lazy")
}
