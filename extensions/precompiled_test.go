package extensions_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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

// TestShellLoad: a module compiled into the cache is loaded by a later
// host (reading the cache from disk) through its shell, and runs its own
// code; two modules that differ only in their code each run their own
// code through the same cache; a cache entry that is not the recorded one
// is not used (the module is compiled again and runs its own code).
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
	records, _ := filepath.Glob(filepath.Join(cache, "pi-compiled", "*", "*"))
	if len(records) != 1 {
		t.Fatalf("records %v", records)
	}
	rec, err := os.ReadFile(records[0])
	if err != nil || !strings.HasPrefix(string(rec), "shell2 wazero-") {
		t.Fatalf("record %q, %v", rec, err)
	}

	n := extensions.ShellLoads()
	later := newHost(t, extensions.Options{CacheDir: freshView(t, cache)})
	if got := helloText(t, load(t, later, extensions.Spec{Path: good})); got != "hello from wat" {
		t.Fatalf("load through the shell: hello says %q", got)
	}
	if extensions.ShellLoads() != n+1 {
		t.Fatalf("the later load did not go through the shell (%d shell loads before, %d after)", n, extensions.ShellLoads())
	}

	// The variant's shell differs from good's by the sha256 it names: it
	// gets its own entry and runs its own code, before and after.
	v1 := newHost(t, extensions.Options{CacheDir: cache})
	if got := helloText(t, load(t, v1, extensions.Spec{Path: variant})); got != "" {
		t.Fatalf("variant: hello says %q, want an empty answer", got)
	}
	v2 := newHost(t, extensions.Options{CacheDir: freshView(t, cache)})
	if got := helloText(t, load(t, v2, extensions.Spec{Path: variant})); got != "" {
		t.Fatalf("variant through its shell: hello says %q, want an empty answer", got)
	}
	g2 := newHost(t, extensions.Options{CacheDir: freshView(t, cache)})
	if got := helloText(t, load(t, g2, extensions.Spec{Path: good})); got != "hello from wat" {
		t.Fatalf("good after the variant: hello says %q", got)
	}

	// An entry of another size than recorded (what wazero writes when it
	// compiles a shell itself: code that only traps) is not used.
	entry := filepath.Join(cache, strings.Fields(string(rec))[1])
	code, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entry, code[:len(code)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	n = extensions.ShellLoads()
	h := newHost(t, extensions.Options{CacheDir: freshView(t, cache)})
	if got := helloText(t, load(t, h, extensions.Spec{Path: good})); got != "hello from wat" {
		t.Fatalf("with a wrong entry: hello says %q", got)
	}
	if extensions.ShellLoads() != n+1 { // compiled again, recorded again, loaded through the new record
		t.Fatalf("shell loads %d → %d", n, extensions.ShellLoads())
	}
	if st, err := os.Stat(entry); err != nil || st.Size() != int64(len(code)) {
		t.Fatalf("the entry was not written again: %v, %v", st, err)
	}

	// A record made on another CPU: not used (wazero's entry for the
	// shell on this CPU would be another one); compiled and recorded
	// again.
	rec, _ = os.ReadFile(records[0])
	f := strings.Fields(string(rec))
	if err := os.WriteFile(records[0], []byte(strings.Join(append(f[:3], "0000000000000000"), " ")), 0o600); err != nil {
		t.Fatal(err)
	}
	n = extensions.ShellLoads()
	h = newHost(t, extensions.Options{CacheDir: freshView(t, cache)})
	if got := helloText(t, load(t, h, extensions.Spec{Path: good})); got != "hello from wat" {
		t.Fatalf("record of another CPU: hello says %q", got)
	}
	if again, _ := os.ReadFile(records[0]); string(again) != string(rec) {
		t.Fatalf("record not made again: %q, want %q", again, rec)
	}

	// The record names an entry of the right size that is not the one
	// wazero looks for (as after a change of the shell's format), and
	// wazero's own entry is gone: wazero compiles the shell itself, which
	// must not be used.
	vrecs, _ := filepath.Glob(filepath.Join(cache, "pi-compiled", "*", "*"))
	var vrec []byte
	for _, r := range vrecs {
		if r != records[0] {
			vrec, _ = os.ReadFile(r)
		}
	}
	vf := strings.Fields(string(vrec))
	if len(vf) != 4 || vf[1] == f[1] {
		t.Fatalf("variant's record %q", vrec)
	}
	if err := os.Remove(entry); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(records[0], vrec, 0o600); err != nil {
		t.Fatal(err)
	}
	h = newHost(t, extensions.Options{CacheDir: freshView(t, cache)})
	if got := helloText(t, load(t, h, extensions.Spec{Path: good})); got != "hello from wat" {
		t.Fatalf("record of another entry: hello says %q", got)
	}
	if again, _ := os.ReadFile(records[0]); string(again) != string(rec) {
		t.Fatalf("record not made again: %q, want %q", again, rec)
	}
	// The entry the record named (the variant's) was removed with it.
	if _, err := os.Stat(filepath.Join(cache, vf[1])); err == nil {
		t.Errorf("the entry the record named before, %s, is still there", vf[1])
	}
	h = newHost(t, extensions.Options{CacheDir: freshView(t, cache)})
	if got := helloText(t, load(t, h, extensions.Spec{Path: good})); got != "hello from wat" {
		t.Fatalf("after the record was made again: hello says %q", got)
	}

	// A missing entry: compiled again.
	if err := os.Remove(entry); err != nil {
		t.Fatal(err)
	}
	h = newHost(t, extensions.Options{CacheDir: freshView(t, cache)})
	if got := helloText(t, load(t, h, extensions.Spec{Path: good})); got != "hello from wat" {
		t.Fatalf("without the entry: hello says %q", got)
	}
}
