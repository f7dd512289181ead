package app

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/manage"
)

// compileLog records CompileProgress calls.
type compileLog struct {
	mu    sync.Mutex
	told  []string
	ended []error
}

func (c *compileLog) progress(file string) func(time.Duration, error) {
	c.mu.Lock()
	c.told = append(c.told, file)
	c.mu.Unlock()
	return func(d time.Duration, err error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if d <= 0 {
			err = errors.Join(err, errors.New("no elapsed time"))
		}
		c.ended = append(c.ended, err)
	}
}

// TestCompileProgress: install tells CompileProgress it compiles the module
// (by its file name) before the wait, and when it ends; a start whose
// compilation cache lost the module says so too; a refused module's end is
// told with its error. The notice threshold is 0 here (no timing in the
// test): every real compile is told.
func TestCompileProgress(t *testing.T) {
	old := extensions.CompileNoticeAfter
	extensions.CompileNoticeAfter = 0
	t.Cleanup(func() { extensions.CompileNoticeAfter = old })
	t.Setenv("PI_CACHE_DIR", t.TempDir())

	dir, home := project(t)
	wasm := plugin.ScaffoldWAT(t, "compiled", "c", `[]`)
	var inst compileLog
	if _, err := manage.Install(context.Background(), manage.InstallRequest{Scope: manage.Scope{Cwd: dir, PIHome: home}, Source: wasm, CompileProgress: inst.progress}); err != nil {
		t.Fatal(err)
	}
	if len(inst.told) != 1 || inst.told[0] != "compiled.wasm" || len(inst.ended) != 1 || inst.ended[0] != nil {
		t.Fatalf("install: told %q, ended %v", inst.told, inst.ended)
	}

	// The cache is lost: a new, empty one.
	t.Setenv("PI_CACHE_DIR", t.TempDir())
	var start compileLog
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, CompileProgress: start.progress})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if len(start.told) != 1 || !strings.HasSuffix(start.told[0], "compiled.wasm") || len(start.ended) != 1 || start.ended[0] != nil {
		t.Fatalf("start: told %q, ended %v", start.told, start.ended)
	}

	// A refused module: the compile's end is told with its error.
	bad := plugin.ScaffoldWAT(t, "bad", "b", `[]`)
	write(t, bad, "not wasm")
	var refused compileLog
	if _, err := manage.Install(context.Background(), manage.InstallRequest{Scope: manage.Scope{Cwd: dir, PIHome: home}, Source: bad, CompileProgress: refused.progress}); err == nil {
		t.Fatal("a module that is not WebAssembly was installed")
	}
	if len(refused.ended) != 1 || refused.ended[0] == nil {
		t.Fatalf("refused: told %q, ended %v", refused.told, refused.ended)
	}
}

// TestRefusedCacheRunsWithout: a cache folder someone else could write (a
// PI_CACHE_DIR of mode 0777, a planted world-writable entry in wazero's
// folder, a planted lazy-load record) is never used: pi warns, naming the
// path and the chmod that fixes it, and runs the extension without it,
// writing nothing into the refused folder.
func TestRefusedCacheRunsWithout(t *testing.T) {
	t.Setenv("PI_CACHE_DIR", t.TempDir())
	dir, home := project(t)
	wasm := plugin.ScaffoldWAT(t, "hello", "no cache", `[]`)
	if _, err := manage.Install(context.Background(), manage.InstallRequest{Scope: manage.Scope{Cwd: dir, PIHome: home}, Source: wasm}); err != nil {
		t.Fatal(err)
	}
	tree := func(root string) map[string]string {
		out := map[string]string{}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				out[p] = string(b)
			}
			return nil
		})
		return out
	}
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T) (watched, named string)
	}{
		{"PI_CACHE_DIR is mode 0777", func(t *testing.T) (string, string) {
			c := filepath.Join(t.TempDir(), "cache")
			if err := os.Mkdir(c, 0o700); err != nil {
				t.Fatal(err)
			}
			os.Chmod(c, 0o777)
			t.Setenv("PI_CACHE_DIR", c)
			return c, c
		}},
		{"a planted world-writable entry", func(t *testing.T) (string, string) {
			c := t.TempDir()
			e := filepath.Join(c, "wazero-v0-"+goruntime.GOARCH+"-"+goruntime.GOOS, strings.Repeat("0", 64))
			os.MkdirAll(filepath.Dir(e), 0o700)
			write(t, e, "planted native code")
			os.Chmod(e, 0o666)
			t.Setenv("PI_CACHE_DIR", c)
			return c, e
		}},
		{"a planted lazy-load record", func(t *testing.T) (string, string) {
			rec := filepath.Join(home, "cache", "lazy", strings.Repeat("1", 64)+".json")
			os.MkdirAll(filepath.Dir(rec), 0o700)
			write(t, rec, `{"file":"x","init":{}}`)
			os.Chmod(rec, 0o646)
			t.Cleanup(func() { os.Remove(rec) })
			return filepath.Dir(rec), rec
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			watched, named := tc.spoil(t)
			before := tree(watched)
			var mu sync.Mutex
			var warns []string
			rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Trust: true, OnWarning: func(w string) {
				mu.Lock()
				warns = append(warns, w)
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			res, err := rt.CallTool(context.Background(), "hello", "c", json.RawMessage(`{}`), nil)
			if err != nil || !strings.Contains(res.Text(), "Hello from no cache!") {
				t.Fatalf("the extension without the cache = %q, %v", res.Text(), err)
			}
			mu.Lock()
			w := strings.Join(warns, "\n")
			mu.Unlock()
			for _, want := range []string{"refuse", named, "writable by every user", "chmod go-w " + named, "without"} {
				if !strings.Contains(w, want) {
					t.Errorf("warnings %q lack %q", w, want)
				}
			}
			if after := tree(watched); !maps.Equal(before, after) {
				t.Errorf("the refused folder changed: %v -> %v", before, after)
			}
		})
	}
}
