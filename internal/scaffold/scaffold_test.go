package scaffold

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the module root (two levels up from this package).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestWriteEachLanguage(t *testing.T) {
	want := map[string][]string{
		"go":   {"README.md", "build.sh", "go.mod", "logic.go", "logic_test.go", "main.go", "test.sh"},
		"c":    {"README.md", "build.sh", "ext-1.c", "pi.h", "test.sh"},
		"rust": {"README.md", "build.sh", "src/lib.rs", "src/pi.rs", "test.sh"},
		"wat":  {"README.md", "build.sh", "ext-1.wat", "test.sh"},
	}
	for _, lang := range Languages {
		dir := filepath.Join(t.TempDir(), "p")
		files, err := Write(Options{Dir: dir, Name: "ext-1", Lang: lang, PiVersion: "9.9"})
		if err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		var top []string
		for _, f := range files {
			if !strings.HasPrefix(f, "pisdk/") {
				top = append(top, f)
			}
		}
		if !slices.Equal(top, want[lang]) {
			t.Errorf("%s: files %v, want %v", lang, top, want[lang])
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("__NAME__")) || bytes.Contains(b, []byte("__IDENT__")) || bytes.Contains(b, []byte("__GOVERSION__")) {
				t.Errorf("%s/%s: a placeholder is left", lang, f)
			}
			fi, _ := os.Stat(filepath.Join(dir, f))
			if exec := fi.Mode()&0o111 != 0; exec != strings.HasSuffix(f, ".sh") {
				t.Errorf("%s/%s: mode %v", lang, f, fi.Mode())
			}
		}
	}
}

// The shipped files are the repository's own, byte for byte: the SDK's
// non-test Go files and internal/abi's, pi.h, pi.rs.
func TestShippedFilesAreTheRealOnes(t *testing.T) {
	root := repoRoot(t)
	check := func(lang, inProject, inRepo string) {
		dir := filepath.Join(t.TempDir(), "p")
		if _, err := Write(Options{Dir: dir, Name: "x", Lang: lang}); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, inProject))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(root, inRepo))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %s differs from %s", lang, inProject, inRepo)
		}
	}
	check("c", "pi.h", "sdk/c/pi.h")
	check("rust", "src/pi.rs", "sdk/rust/pi.rs")
	for _, pkg := range []string{"sdk", "internal/abi"} {
		src, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range src {
			name := filepath.Base(f)
			dir := filepath.Join(t.TempDir(), "p")
			if _, err := Write(Options{Dir: dir, Name: "x", Lang: "go"}); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(filepath.Join(dir, "pisdk", pkg, name))
			if strings.HasSuffix(name, "_test.go") {
				if err == nil {
					t.Errorf("test file %s/%s shipped", pkg, name)
				}
				continue
			}
			check("go", filepath.Join("pisdk", pkg, name), filepath.Join(pkg, name))
		}
	}
}

func TestWriteRefuses(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Dir: full, Name: "x", Lang: "go"}, "already has files"},
		{Options{Dir: filepath.Join(t.TempDir(), "a"), Name: "../x", Lang: "go"}, "new extension"},
		{Options{Dir: filepath.Join(t.TempDir(), "a"), Name: "Bad", Lang: "go"}, "new extension"},
		{Options{Dir: filepath.Join(t.TempDir(), "a"), Name: "x", Lang: "cobol"}, "unknown language"},
	} {
		if _, err := Write(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.opts, err, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(full, "keep")); string(b) != "x" {
		t.Error("an existing file was touched")
	}
	// An empty existing folder is fine.
	if _, err := Write(Options{Dir: t.TempDir(), Name: "x", Lang: "wat"}); err != nil {
		t.Error(err)
	}
}

// The Go scaffold builds for wasip1 and its tests pass with nothing but
// the Go toolchain: no module proxy, an empty module cache.
func TestGoScaffoldBuildsOffline(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "off")
	if _, err := Write(Options{Dir: dir, Name: "off", Lang: "go"}); err != nil {
		t.Fatal(err)
	}
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local",
		"GOMODCACHE="+t.TempDir(), "GOCACHE="+strings.TrimSpace(string(gocache)))
	for _, args := range [][]string{
		{"build", "-buildmode=c-shared", "-o", filepath.Join(dir, "off.wasm"), "."},
		{"vet", "."},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, append(env, "GOOS=wasip1", "GOARCH=wasm")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	cmd := exec.Command("go", "test", "./...")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "off.wasm"))
	if err != nil || !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Fatalf("no module built: %v", err)
	}
}
