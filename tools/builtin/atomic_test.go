package builtin

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/childready"
	"github.com/pi-go/pi/runtime/tool"
)

// The writer itself (internal/atomicfile) has its own tests: symlinks, modes,
// owners, failures and kills. These check that the write tool goes through
// it end to end.

// TestWriteToolKeepsSymlink writes through the write tool to a symlinked
// file: the link stays a link and its target gets the content.
func TestWriteToolKeepsSymlink(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "real", "notes.txt"), "old")
	if err := os.Symlink(filepath.Join("real", "notes.txt"), filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"path": "notes.txt", "content": "new"})
	if r := tool.Run(context.Background(), fileTools(t, dir), nil, "write", "w", args, nil); r.IsError {
		t.Fatal(r.Text())
	}
	if fi, err := os.Lstat(filepath.Join(dir, "notes.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("notes.txt is no longer a symlink: %v %v", fi, err)
	}
	if got := mustRead(t, filepath.Join(dir, "real", "notes.txt")); got != "new" {
		t.Errorf("target = %q", got)
	}
}

// TestWriteToolKilled SIGKILLs a process that keeps rewriting one file
// through the write tool's whole pipeline at random moments: the file must
// always be a whole old or new version.
func TestWriteToolKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns writer processes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	versions := atomicTestVersions()
	mustWrite(t, path, versions[0])
	for i := range 12 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAtomicWriterProcess$")
		cmd.Env = append(os.Environ(), "PI_TEST_ATOMIC_WRITER="+path)
		childready.Start(t, cmd)
		// Kill it at a random moment of its write loop: the random sleep
		// is the behaviour under test, not an ordering.
		time.Sleep(time.Duration(rand.IntN(20_000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		got := mustRead(t, path)
		if got != versions[0] && got != versions[1] {
			t.Fatalf("kill %d: file is neither version (len %d)", i, len(got))
		}
	}
}

// TestAtomicWriterProcess is the writer of TestWriteToolKilled when run as
// its subprocess; otherwise it does nothing.
func TestAtomicWriterProcess(t *testing.T) {
	path := os.Getenv("PI_TEST_ATOMIC_WRITER")
	if path == "" {
		t.Skip("only runs as the subprocess of TestWriteToolKilled")
	}
	versions := atomicTestVersions()
	tools := fileTools(t, filepath.Dir(path))
	for i := 0; ; i++ {
		args, _ := json.Marshal(map[string]string{"path": filepath.Base(path), "content": versions[i%2]})
		if r := tool.Run(context.Background(), tools, nil, "write", "w", args, nil); r.IsError {
			t.Fatal(r.Text())
		}
		if i == 0 {
			childready.Signal()
		}
	}
}

func atomicTestVersions() [2]string {
	return [2]string{strings.Repeat("old line\n", 100_000), strings.Repeat("NEW LINE, longer\n", 70_000)}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Errorf("mode %v, want %v", fi.Mode().Perm(), want)
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.Contains(fi.Name(), ".pi-tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
