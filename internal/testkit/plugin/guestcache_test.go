package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompileGuestCache: a second build of the same sources comes from the
// cache (the compiler does not run), a change to any file under the source
// folders or to the arguments compiles again, and a failed compile is
// reported with the compiler's output and not cached.
func TestCompileGuestCache(t *testing.T) {
	root := ModuleRoot(t)
	src, err := os.MkdirTemp(root, ".guestcache-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(src) })
	rel, _ := filepath.Rel(root, src)
	cacheHome := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cacheHome)
	t.Setenv("HOME", cacheHome)
	runs := filepath.Join(t.TempDir(), "runs")
	// A "compiler": counts its runs, fails on FAIL in the source, else
	// writes the source and its flag to the output.
	cc := filepath.Join(t.TempDir(), "fakecc")
	script := "#!/bin/sh\n[ \"$1\" = --version ] && { echo fakecc 1.0; exit 0; }\necho run >> " + runs +
		"\nif grep -q FAIL \"$2\"; then echo 'error: it says FAIL' >&2; exit 1; fi\n{ cat \"$2\"; echo \"$3\"; } > \"$1\"\n"
	if err := os.WriteFile(cc, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(text string) {
		if err := os.WriteFile(filepath.Join(src, "main.c"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run")
	}
	build := func(flag string) (string, error) {
		out := filepath.Join(t.TempDir(), "g.wasm")
		err := CompileGuest(t, out, []string{rel}, cc, out, filepath.Join(rel, "main.c"), flag)
		b, _ := os.ReadFile(out)
		return string(b), err
	}
	write("one\n")
	for i, want := range []struct {
		flag, out string
		runs      int
	}{{"-a", "one\n-a\n", 1}, {"-a", "one\n-a\n", 1}, {"-b", "one\n-b\n", 2}} {
		got, err := build(want.flag)
		if err != nil || got != want.out || count() != want.runs {
			t.Fatalf("build %d: %q, %v, compiler ran %d times (want %q, %d)", i, got, err, count(), want.out, want.runs)
		}
	}
	write("two\n")
	if got, err := build("-a"); err != nil || got != "two\n-a\n" || count() != 3 {
		t.Fatalf("after a change: %q, %v, %d runs", got, err, count())
	}
	write("FAIL")
	for i := range 2 {
		if _, err := build("-a"); err == nil || !strings.Contains(err.Error(), "it says FAIL") || count() != 4+i {
			t.Fatalf("failed compile %d: %v, %d runs", i, err, count())
		}
	}
}
