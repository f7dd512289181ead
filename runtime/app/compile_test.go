package app

import (
	"context"
	"errors"
	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/manage"
	"strings"
	"sync"
	"testing"
	"time"
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
