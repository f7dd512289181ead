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
