package extensions_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
)

// watVariant assembles good.wat with old replaced by new in its text (once)
// and returns the module's path.
func watVariant(t *testing.T, old, new string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot(t), watPath("good")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(src), old) != 1 {
		t.Fatalf("good.wat has %q %d times", old, strings.Count(string(src), old))
	}
	dir := t.TempDir()
	wf := filepath.Join(dir, "v.wat")
	if err := os.WriteFile(wf, []byte(strings.Replace(string(src), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "v.wasm")
	if b, err := exec.Command("wat2wasm", wf, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm (Debian package wabt): %v\n%s", err, b)
	}
	return out
}

// freshView is another name (a symbolic link) of the cache folder dir:
// a host on it gets a wazero cache of its own in this process, so its
// loads read the compiled code from disk as a new pi process does.
func freshView(t *testing.T, dir string) string {
	t.Helper()
	link := filepath.Join(t.TempDir(), "cache")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// helloText is the text of good's hello tool through the extension.
func helloText(t *testing.T, e *extensions.Extension) string {
	t.Helper()
	r := run(context.Background(), tools(t, e), nil, "hello", `{}`)
	if r.IsError {
		t.Fatalf("hello: %s", r.Text())
	}
	return r.Text()
}

// recordOf is the record of the one module compiled into cache with
// that module's sha256 prefix ("" for the only one), and its code file.
func recordOf(t *testing.T, cache string) (rec, code string) {
	t.Helper()
	recs, _ := filepath.Glob(filepath.Join(cache, "pi-compiled", "*", "*"))
	var found []string
	for _, r := range recs {
		if !strings.HasSuffix(r, ".code") {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("records %v", recs)
	}
	return found[0], found[0] + ".code"
}

// loadsThroughShell loads path in a host on a fresh view of cache and
// checks hello's answer and that the load went through the shell (also
// after a compile: the module is recorded, then loaded through the new
// record).
func loadsThroughShell(t *testing.T, cache, path, want string) *extensions.Host {
	t.Helper()
	n := extensions.ShellLoads()
	h := newHost(t, extensions.Options{CacheDir: freshView(t, cache)})
	if got := helloText(t, load(t, h, extensions.Spec{Path: path})); got != want {
		t.Fatalf("hello says %q, want %q", got, want)
	}
	if got := extensions.ShellLoads() - n; got != 1 {
		t.Fatalf("%d loads through the shell, want 1", got)
	}
	return h
}

// TestShellLoad: a module compiled into the cache is loaded by a later
// host (reading the cache from disk) through its shell with its recorded
// code, and runs its own code; two modules that differ only in their code
// each run their own code through the same cache; a record or code file
// that does not fit is not used (the module is compiled again, runs its
// own code and is recorded again).
func TestShellLoad(t *testing.T) {
	good := wat(t, "good")
	// The same module but for one constant in the code of tool.execute:
	// hello answers an empty result instead of "hello from wat".
	variant := watVariant(t, "(call $answer (i32.const 10240)))", "(call $answer (i32.const 10752)))")
	cache := t.TempDir()

	first := newHost(t, extensions.Options{CacheDir: cache})
	if got := helloText(t, load(t, first, extensions.Spec{Path: good})); got != "hello from wat" {
		t.Fatalf("first load: hello says %q", got)
	}
	record, codeFile := recordOf(t, cache)
	rec, err := os.ReadFile(record)
	if err != nil || !strings.HasPrefix(string(rec), "shell3 ") {
		t.Fatalf("record %q, %v", rec, err)
	}
	code, err := os.ReadFile(codeFile)
	if err != nil || !strings.HasPrefix(string(code), "pi-code1") {
		t.Fatalf("code file: %v", err)
	}
	loadsThroughShell(t, cache, good, "hello from wat")

	// The variant's shell differs from good's by the sha256 it names: it
	// gets its own record and runs its own code, before and after.
	v1 := newHost(t, extensions.Options{CacheDir: cache})
	if got := helloText(t, load(t, v1, extensions.Spec{Path: variant})); got != "" {
		t.Fatalf("variant: hello says %q, want an empty answer", got)
	}
	loadsThroughShell(t, cache, variant, "")
	loadsThroughShell(t, cache, good, "hello from wat")

	// Each change below is not used: the module is compiled again (its
	// record and code file are written again) and runs its own code.
	var variantCode string
	codes, _ := filepath.Glob(filepath.Join(cache, "pi-compiled", "*", "*.code"))
	for _, c := range codes {
		if c != codeFile {
			variantCode = c
		}
	}
	for _, c := range []struct {
		name  string
		spoil func()
	}{
		{"a flipped byte in the code", func() {
			b := append([]byte(nil), code...)
			b[len(b)-100] ^= 0x40
			os.WriteFile(codeFile, b, 0o600)
		}},
		{"a shorter code file", func() { os.WriteFile(codeFile, code[:len(code)/2], 0o600) }},
		{"the code file changed in place (same size)", func() {
			f, err := os.OpenFile(codeFile, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt([]byte{0xcc}, int64(len(code)-1))
			f.Close()
		}},
		{"no code file", func() { os.Remove(codeFile) }},
		{"the variant's code file (of the same size) in its place", func() {
			b, err := os.ReadFile(variantCode)
			if err != nil || len(b) != len(code) {
				t.Fatalf("variant's code: %d bytes, %v", len(b), err)
			}
			os.WriteFile(codeFile, b, 0o600)
		}},
		{"a record of another CPU", func() {
			f := strings.Fields(string(rec))
			f[2] = "0000000000000000"
			os.WriteFile(record, []byte(strings.Join(f, " ")), 0o600)
		}},
		{"an older pi's record", func() {
			os.WriteFile(record, []byte("shell2 wazero-v1/"+strings.Repeat("ab", 32)+" 100 0000000000000000\n"), 0o600)
		}},
	} {
		c.spoil()
		before, _ := os.Stat(codeFile)
		loadsThroughShell(t, cache, good, "hello from wat")
		if after, err := os.Stat(codeFile); err != nil || (before != nil && os.SameFile(before, after)) {
			t.Fatalf("%s: the code file was not written again (%v)", c.name, err)
		}
		if again, _ := os.ReadFile(record); strings.Join(strings.Fields(string(again))[:3], " ") != strings.Join(strings.Fields(string(rec))[:3], " ") {
			t.Fatalf("%s: record not made again: %q, like %q", c.name, again, rec)
		}
		if again, _ := os.ReadFile(codeFile); string(again) != string(code) {
			t.Fatalf("%s: code file not written again", c.name)
		}
		loadsThroughShell(t, cache, good, "hello from wat")
	}
}

// TestShellLoadShared: hosts on one cache folder share wazero's compiled
// module of a shell (wazero keeps it in memory): the code is put in once,
// every host runs it, and closing one host leaves the others' running.
// On Linux the code is a mapping of the code file, not a copy.
func TestShellLoadShared(t *testing.T) {
	good := wat(t, "good")
	cache := t.TempDir()
	first := newHost(t, extensions.Options{CacheDir: cache})
	load(t, first, extensions.Spec{Path: good})
	_, codeFile := recordOf(t, cache)
	view := freshView(t, cache)
	n := extensions.ShellLoads()
	a := newHost(t, extensions.Options{CacheDir: view})
	ea := load(t, a, extensions.Spec{Path: good})
	b := newHost(t, extensions.Options{CacheDir: view})
	eb := load(t, b, extensions.Spec{Path: good})
	if got := extensions.ShellLoads() - n; got != 2 {
		t.Fatalf("%d loads through the shell, want 2", got)
	}
	if runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") {
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(maps), " r-xp ") || !strings.Contains(string(maps), codeFile) {
			t.Fatalf("the code file %s is not mapped executable", codeFile)
		}
	}
	if got := helloText(t, ea); got != "hello from wat" {
		t.Fatalf("a: hello says %q", got)
	}
	a.Close(context.Background())
	if got := helloText(t, eb); got != "hello from wat" {
		t.Fatalf("b after a closed: hello says %q", got)
	}
}

// TestWazeroPinned: codemap.go puts compiled code into wazero's compiled
// module by the names and types of wazero v1.12.0's internal fields
// (checked at run time; a mismatch compiles in full instead, which
// TestShellLoad would report). A change of wazero's version must re-read
// its engine (internal/engine/wazevo) against codemap.go first.
func TestWazeroPinned(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\tgithub.com/tetratelabs/wazero v1.12.0\n") {
		t.Fatal("go.mod's wazero is not v1.12.0: check extensions/codemap.go against the new wazero's internal/engine/wazevo (compiledModule, executables, engine), then update this test")
	}
}
