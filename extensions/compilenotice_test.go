package extensions_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pi-go/pi/extensions"
)

// TestCompileNotice: with a zero threshold OnCompile is told before the
// compile and its function when it ends (with the error of a module that
// does not compile); with a threshold no compile
// reaches, nothing is told and the load does not wait for the threshold.
func TestCompileNotice(t *testing.T) {
	wasm := wat(t, "good")
	type event struct {
		path string
		err  error
		d    time.Duration
	}
	var mu sync.Mutex
	var told, ended []event
	notice := func(path string) func(time.Duration, error) {
		mu.Lock()
		told = append(told, event{path: path})
		mu.Unlock()
		return func(d time.Duration, err error) {
			mu.Lock()
			defer mu.Unlock()
			ended = append(ended, event{path: path, err: err, d: d})
		}
	}
	h := newHost(t, extensions.Options{CacheDir: t.TempDir(), OnCompile: notice})
	load(t, h, extensions.Spec{Name: "good", Path: wasm})
	if len(told) != 1 || told[0].path != wasm || len(ended) != 1 || ended[0].err != nil || ended[0].d <= 0 {
		t.Fatalf("told %+v, ended %+v", told, ended)
	}
	// A threshold far beyond the compile: never told, and the load is not
	// held until it passes.
	told, ended = nil, nil
	h2 := newHost(t, extensions.Options{CacheDir: t.TempDir(), OnCompile: notice, CompileNoticeAfter: time.Hour})
	start := time.Now()
	load(t, h2, extensions.Spec{Name: "good", Path: wasm})
	if len(told) != 0 || len(ended) != 0 {
		t.Fatalf("told %+v, ended %+v", told, ended)
	}
	if d := time.Since(start); d > 10*time.Minute {
		t.Fatalf("the load waited %s", d)
	}

	// A module that does not compile: the end is told with the error.
	told, ended = nil, nil
	bad := filepath.Join(t.TempDir(), "bad.wasm")
	if err := os.WriteFile(bad, []byte("\x00asm\x01\x00\x00\x00\x99 broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	h3 := newHost(t, extensions.Options{OnCompile: notice})
	if _, err := h3.Load(context.Background(), extensions.Spec{Path: bad}); err == nil {
		t.Fatal("a broken module loaded")
	}
	if len(told) != 1 || told[0].path != bad || len(ended) != 1 || ended[0].err == nil {
		t.Fatalf("told %+v, ended %+v", told, ended)
	}
}

// TestCompileNoticeOnlyForARealCompile: a module the cache holds is not
// told about, even with a zero threshold, though wazero takes hundreds of
// milliseconds to decode a cached Go guest; the first compile into a cache
// is told.
func TestCompileNoticeOnlyForARealCompile(t *testing.T) {
	var mu sync.Mutex
	var told []string
	notice := func(path string) func(time.Duration, error) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, path)
		return nil
	}
	// A fresh cache: told on the first host, not on the next one.
	fresh := t.TempDir()
	good := wat(t, "good")
	for i, want := range []int{1, 1} {
		h := newHost(t, extensions.Options{CacheDir: fresh, OnCompile: notice})
		load(t, h, extensions.Spec{Name: "good", Path: good})
		if len(told) != want {
			t.Fatalf("host %d: told %q, want %d notice(s)", i+1, told, want)
		}
	}
	// A real Go guest: loaded once into the shared cache (told or not,
	// as that cache had it), then a new host loads it warm without a word.
	guest := goGuest(t, "examples/plugins/loc")
	load(t, newHost(t, extensions.Options{OnCompile: notice}), extensions.Spec{Name: "loc", Path: guest})
	told = nil
	start := time.Now()
	load(t, newHost(t, extensions.Options{OnCompile: notice}), extensions.Spec{Name: "loc", Path: guest})
	if len(told) != 0 {
		t.Fatalf("a warm load of the Go guest was told as a compile: %q", told)
	}
	t.Logf("warm load of the Go guest: %s", time.Since(start))
}
