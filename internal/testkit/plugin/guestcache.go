package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/internal/atomicfile"
)

// CompileGuest runs a C or Rust compiler that writes a .wasm module to out,
// through a cache that every test binary and every run of the suite share
// (pi-go/test-guests under the user's cache folder, beside CacheDir): a Rust
// guest takes about 5 s of CPU to compile and the same guests are built by
// several packages (each example's own tests and the examples' docs test),
// in both the plain and the race runs of the suite.
//
// argv is the whole command (argv[0] the compiler), run in the module's
// root: name the sources relative to it, so that the module (whose panic
// texts carry the paths) and the key are the same in every clone. It must
// name out (absolute) literally. The cache key is the compiler's identity
// (its resolved path, size, modification time and version line), argv with
// out taken out, and the contents of every file under srcDirs (relative to
// the root): give the folders of the sources and of everything they include
// (the SDK's sdk/c or sdk/rust), so that a change to any of them compiles
// again. On a failed compile nothing is cached and the compiler's output is
// returned in the error.
func CompileGuest(t testing.TB, out string, srcDirs []string, argv ...string) error {
	t.Helper()
	if len(argv) == 0 || !contains(argv, out) {
		return fmt.Errorf("CompileGuest: the command %q does not name its output %s", argv, out)
	}
	root := ModuleRoot(t)
	key, err := guestKey(root, out, srcDirs, argv)
	if err != nil {
		return err
	}
	dir, err := guestCacheDir()
	if err != nil {
		return err
	}
	cached := filepath.Join(dir, key+".wasm")
	if err := copyFile(cached, out); err == nil {
		return nil
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, b)
	}
	// Into the cache atomically, so that a binary running beside this one
	// reads a whole module or none; a failure only misses the cache.
	if b, err := os.ReadFile(out); err == nil {
		atomicfile.WriteFile(cached, b, 0o644)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func guestCacheDir() (string, error) { return testCache("test-guests") }

var (
	compilerIDs   = map[string]string{}
	compilerIDsMu sync.Mutex
)

// compilerID names the compiler precisely enough that an upgrade misses the
// cache: the resolved file, its size and time, and its version line.
func compilerID(name string) (string, error) {
	compilerIDsMu.Lock()
	defer compilerIDsMu.Unlock()
	if id, ok := compilerIDs[name]; ok {
		return id, nil
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	ver, err := exec.Command(path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v", path, err)
	}
	id := fmt.Sprintf("%s %d %d %s", path, fi.Size(), fi.ModTime().UnixNano(), strings.TrimSpace(string(ver)))
	compilerIDs[name] = id
	return id, nil
}

func guestKey(root, out string, srcDirs []string, argv []string) (string, error) {
	id, err := compilerID(argv[0])
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "compiler %q\n", id)
	for _, a := range argv[1:] {
		if a == out {
			a = "<out>"
		}
		fmt.Fprintf(h, "arg %q\n", a)
	}
	for _, d := range srcDirs {
		if filepath.IsAbs(d) {
			return "", fmt.Errorf("CompileGuest: source folder %s must be relative to the module root", d)
		}
		top := filepath.Join(root, d)
		err := filepath.WalkDir(top, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(top, p)
			fmt.Fprintf(h, "file %q %q %d\n", d, rel, len(b))
			h.Write(b)
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("hash the guest's sources: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
