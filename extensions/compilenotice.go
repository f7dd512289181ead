package extensions

import (
	"context"
	"path/filepath"
	"time"

	"github.com/tetratelabs/wazero"
)

// compileNoticed compiles m, telling Options.OnCompile when the compile is
// still running after Options.CompileNoticeAfter (at once when that is
// zero), and the function it returned when the compile ends. The timer
// goroutine ends with the compile.
func (h *Host) compileNoticed(ctx context.Context, hr *hostRuntime, m module) (wazero.CompiledModule, error) {
	notify := h.opts.OnCompile
	if notify == nil {
		return hr.r.CompileModule(ctx, m.wasm)
	}
	start := time.Now()
	var done func(time.Duration, error)
	told := false
	var stop, exited chan struct{}
	if after := h.opts.CompileNoticeAfter; after <= 0 {
		done, told = notify(m.path), true
	} else {
		stop, exited = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(exited)
			t := time.NewTimer(after)
			defer t.Stop()
			select {
			case <-t.C:
				done, told = notify(m.path), true
			case <-stop:
			}
		}()
	}
	compiled, err := hr.r.CompileModule(ctx, m.wasm)
	if stop != nil {
		close(stop)
		<-exited // done and told are the goroutine's until it has exited
	}
	if told && done != nil {
		done(time.Since(start), err)
	}
	return compiled, err
}

// CompileProgress is OnCompile as programs take it: told the module's file
// name (not its path) when loading it means compiling it, before the wait;
// the function it returns (nil for none) is called when the compile ends,
// with how long it took and its error. Front ends show a progress line
// ("compiling loc.wasm (first load only)…").
type CompileProgress func(file string) (done func(elapsed time.Duration, err error))

// CompileNoticeAfter is how long a compile runs before a CompileProgress
// given to WithCompileProgress is told: a module in the cache compiles in
// milliseconds and is not shown. Tests set it to 0.
var CompileNoticeAfter = 300 * time.Millisecond

// WithCompileProgress returns o with its compile notice set from p
// (OnCompile told the file name after CompileNoticeAfter); o as it is for
// a nil p.
func (o Options) WithCompileProgress(p CompileProgress) Options {
	if p == nil {
		return o
	}
	o.OnCompile = func(path string) func(time.Duration, error) { return p(filepath.Base(path)) }
	o.CompileNoticeAfter = CompileNoticeAfter
	return o
}
