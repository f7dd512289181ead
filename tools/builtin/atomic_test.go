package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/runtime/tool"
)

func TestWriteFileAtomic(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the path to write
		check func(t *testing.T, dir, path string)
	}{
		{
			name:  "creates parent folders and uses the default mode",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "a", "b", "new.txt") },
			check: func(t *testing.T, dir, path string) {
				assertMode(t, path, 0o640)
			},
		},
		{
			name: "keeps an existing file's mode",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "script.sh")
				mustWrite(t, p, "old")
				if err := os.Chmod(p, 0o755); err != nil {
					t.Fatal(err)
				}
				return p
			},
			check: func(t *testing.T, dir, path string) { assertMode(t, path, 0o755) },
		},
		{
			name: "follows a symlink and keeps the link",
			setup: func(t *testing.T, dir string) string {
				mustWrite(t, filepath.Join(dir, "target.txt"), "old")
				if err := os.Symlink("target.txt", filepath.Join(dir, "link.txt")); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(dir, "link.txt")
			},
			check: func(t *testing.T, dir, path string) {
				if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("link is no longer a symlink: %v %v", fi, err)
				}
				if got := mustRead(t, filepath.Join(dir, "target.txt")); got != "new content" {
					t.Errorf("target = %q", got)
				}
			},
		},
		{
			name: "writes a dangling symlink's target",
			setup: func(t *testing.T, dir string) string {
				if err := os.Symlink("later.txt", filepath.Join(dir, "link.txt")); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(dir, "link.txt")
			},
			check: func(t *testing.T, dir, path string) {
				if got := mustRead(t, filepath.Join(dir, "later.txt")); got != "new content" {
					t.Errorf("target = %q", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.setup(t, dir)
			if err := WriteFileAtomic(path, []byte("new content"), 0o640); err != nil {
				t.Fatal(err)
			}
			if got := mustRead(t, path); got != "new content" {
				t.Errorf("content = %q", got)
			}
			tt.check(t, dir, path)
			assertNoTemp(t, dir)
		})
	}
}

func TestWriteFileAtomicFailuresLeaveOldFile(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string) string
		wantErr error
	}{
		{
			name: "read-only file",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "ro.txt")
				mustWrite(t, p, "old")
				if err := os.Chmod(p, 0o444); err != nil {
					t.Fatal(err)
				}
				return p
			},
			wantErr: syscall.EACCES,
		},
		{
			name: "directory",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "d")
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
				return p
			},
		},
		{
			name: "parent is a file",
			setup: func(t *testing.T, dir string) string {
				mustWrite(t, filepath.Join(dir, "file"), "old")
				return filepath.Join(dir, "file", "child.txt")
			},
			wantErr: syscall.ENOTDIR,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.setup(t, dir)
			before := dirSnapshot(t, dir)
			err := WriteFileAtomic(path, []byte("new"), 0o644)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v is not %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s", err, path)
			}
			if after := dirSnapshot(t, dir); !mapsEqual(before, after) {
				t.Errorf("disk changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestWriteFileAtomicKilled SIGKILLs a process that keeps rewriting one file
// at random moments: the file must always be a whole old or new version.
func TestWriteFileAtomicKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns writer processes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	versions := atomicTestVersions()
	mustWrite(t, path, versions[0])
	for i := range 25 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAtomicWriterProcess$")
		// Half the writers go through the write tool's whole pipeline.
		mode := []string{"func", "tool"}[i%2]
		cmd.Env = append(os.Environ(), "PI_TEST_ATOMIC_WRITER="+path, "PI_TEST_ATOMIC_WRITER_MODE="+mode)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the writer has written at least once, then kill it at
		// a random moment of its write loop.
		ready := path + ".ready"
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(ready); err == nil {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatal("writer never got going")
			}
		}
		os.Remove(ready)
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

// TestAtomicWriterProcess is the writer of TestWriteFileAtomicKilled when
// run as its subprocess; otherwise it does nothing.
func TestAtomicWriterProcess(t *testing.T) {
	path := os.Getenv("PI_TEST_ATOMIC_WRITER")
	if path == "" {
		t.Skip("only runs as the subprocess of TestWriteFileAtomicKilled")
	}
	versions := atomicTestVersions()
	viaTool := os.Getenv("PI_TEST_ATOMIC_WRITER_MODE") == "tool"
	tools := fileTools(t, filepath.Dir(path))
	for i := 0; ; i++ {
		if viaTool {
			args, _ := json.Marshal(map[string]string{"path": filepath.Base(path), "content": versions[i%2]})
			if r := tool.Run(context.Background(), tools, nil, "write", "w", args, nil); r.IsError {
				t.Fatal(r.Text())
			}
		} else if err := WriteFileAtomic(path, []byte(versions[i%2]), 0o644); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			mustWrite(t, path+".ready", "")
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
