package extensions

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
)

// compileNoticed compiles m, telling Options.OnCompile when the compile is
// still running after Options.CompileNoticeAfter (at once when that is
// zero), and the function it returned when the compile ends. The timer
// goroutine ends with the compile.
//
// A module this cache has compiled before is not told about: wazero still
// decodes a cached module and reads its code, which takes hundreds of
// milliseconds for a Go guest of a few MB on a busy machine, so the timer
// alone cannot tell a warm load from a real compile. A compile with the
// cache leaves a marker (compiledMarker) that says so; with its record,
// the module is loaded through its shell (precompiled.go).
func (h *Host) compileNoticed(ctx context.Context, hr *hostRuntime, m module) (wazero.CompiledModule, error) {
	if compiled, ok := h.compileRecorded(ctx, hr, m); ok {
		return compiled, nil
	}
	notify := h.opts.OnCompile
	marker := h.compiledMarker(m.sha256)
	if marker != "" {
		if _, err := os.Stat(marker); err == nil {
			notify = nil
		}
	}
	if notify == nil {
		return h.compileAndRecord(ctx, hr, m)
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
	compiled, err := h.compileAndRecord(ctx, hr, m)
	if stop != nil {
		close(stop)
		<-exited // done and told are the goroutine's until it has exited
	}
	if told && done != nil {
		done(time.Since(start), err)
	}
	return compiled, err
}

// compiledMarker is the file that says the module of this sha256 is in the
// compilation cache: CacheDir/pi-compiled/WAZERO-VERSION-ARCH-OS/SHA256
// (wazero keeps its entries per version, architecture and OS too); "" with
// no cache. It is the record of precompiled.go (an older pi left it empty).
func (h *Host) compiledMarker(sha256 string) string {
	if h.cache == nil {
		return ""
	}
	abs, err := filepath.Abs(h.opts.CacheDir)
	if err != nil {
		return ""
	}
	return filepath.Join(abs, "pi-compiled", wazeroVersion()+"-"+runtime.GOARCH+"-"+runtime.GOOS, sha256)
}

// wazeroVersion is the version of wazero built into this program, as
// wazero names its cache folder ("dev" when the build does not say).
func wazeroVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if strings.HasPrefix(d.Path, "github.com/tetratelabs/wazero") && d.Version != "" && d.Version != "(devel)" {
				return d.Version
			}
		}
	}
	return "dev"
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
