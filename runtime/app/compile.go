package app

import (
	"path/filepath"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/config"
)

// CompileProgress is told when loading a module means compiling it (see
// extensions.CompileProgress).
type CompileProgress = extensions.CompileProgress

// cacheDirs are the folders under the cache pi reads code and decisions
// from, each "" when it is refused (config.CheckPrivateTree: someone else
// could have written it) or there is no PI_HOME.
type cacheDirs struct {
	// cache is the compilation cache and MCP tool lists (config.CacheDir).
	cache string
	// lazy keeps the extensions' lazy-load records: $PI_HOME/cache/lazy
	// ("" without a PI_HOME: every load is eager).
	lazy string
	// declared keeps what installed modules declared
	// (config.DeclaredDir).
	declared string
}

// caches checks the cache folders once per runtime, warning about each one
// refused (saying what to run) and using none of it: pi then compiles
// every extension, loads every one eagerly, and keeps no records.
func (r *Runtime) caches() cacheDirs {
	r.cacheOnce.Do(func() {
		var err error
		if r.cacheDirs.cache, err = config.TrustedCacheDir(r.piHome); err != nil {
			r.warn(err.Error())
		}
		if r.piHome == "" {
			return
		}
		if r.cacheDirs.lazy, err = config.RecordsDir(filepath.Join(r.piHome, "cache", "lazy"), "lazy-load records"); err != nil {
			r.warn(err.Error())
		}
		if r.cacheDirs.declared, err = config.RecordsDir(config.DeclaredDir(r.piHome), "declared records"); err != nil {
			r.warn(err.Error())
		}
	})
	return r.cacheDirs
}
