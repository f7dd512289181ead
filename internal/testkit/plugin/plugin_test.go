package plugin

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// fatalRecorder is a testing.TB whose Fatal ends the goroutine like the
// real one and keeps the message; anything else it is asked (a Skip) panics
// through the nil embedded TB.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *fatalRecorder) Fatal(args ...any) {
	r.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

// fatalOf runs fn with a recorder and returns the message it failed with
// ("" when it did not fail).
func fatalOf(fn func(testing.TB)) string {
	r := &fatalRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r.msg
}

// TestMissingModuleFails: a test module or guest that is not there fails
// the test, naming the file, rather than skipping it or leaving wat2wasm's
// or go build's message to explain.
func TestMissingModuleFails(t *testing.T) {
	msg := fatalOf(func(tb testing.TB) { BuildWAT(tb, "extensions/testdata/no-such-module.wat") })
	if !strings.Contains(msg, "test module extensions/testdata/no-such-module.wat is missing") {
		t.Errorf("BuildWAT of a missing file failed with %q", msg)
	}
	msg = fatalOf(func(tb testing.TB) { BuildGo(tb, "examples/plugins/no-such-guest") })
	if !strings.Contains(msg, "guest examples/plugins/no-such-guest is missing") {
		t.Errorf("BuildGo of a missing folder failed with %q", msg)
	}
}

// TestBuildWAT: a module that is there is assembled once.
func TestBuildWAT(t *testing.T) {
	a := BuildWAT(t, "extensions/testdata/trap.wat")
	if _, err := os.Stat(a); err != nil {
		t.Fatal(err)
	}
	if b := BuildWAT(t, "extensions/testdata/trap.wat"); b != a {
		t.Errorf("second build = %s, want the first %s", b, a)
	}
}
