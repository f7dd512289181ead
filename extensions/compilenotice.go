package extensions

import (
	"context"
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
