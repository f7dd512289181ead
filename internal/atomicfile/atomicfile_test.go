package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/childready"
)

func TestWriteFile(t *testing.T) {
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
				mustSymlink(t, "target.txt", filepath.Join(dir, "link.txt"))
				return filepath.Join(dir, "link.txt")
			},
			check: func(t *testing.T, dir, path string) {
				assertLink(t, path, "target.txt")
				if got := mustRead(t, filepath.Join(dir, "target.txt")); got != "new content" {
					t.Errorf("target = %q", got)
				}
			},
		},
		{
			name: "follows a chain of links into another folder",
			setup: func(t *testing.T, dir string) string {
				mustWrite(t, filepath.Join(dir, "dotfiles", "pi.toml"), "old")
				mustSymlink(t, filepath.Join(dir, "dotfiles", "pi.toml"), filepath.Join(dir, "hop2"))
				mustSymlink(t, filepath.Join("..", "hop2"), filepath.Join(dir, "proj", "pi.toml"))
				return filepath.Join(dir, "proj", "pi.toml")
			},
			check: func(t *testing.T, dir, path string) {
				assertLink(t, path, filepath.Join("..", "hop2"))
				assertLink(t, filepath.Join(dir, "hop2"), filepath.Join(dir, "dotfiles", "pi.toml"))
				if got := mustRead(t, filepath.Join(dir, "dotfiles", "pi.toml")); got != "new content" {
					t.Errorf("target = %q", got)
				}
			},
		},
		{
			name: "follows a symlinked folder",
			setup: func(t *testing.T, dir string) string {
				mustWrite(t, filepath.Join(dir, "real", "f"), "old")
				mustSymlink(t, "real", filepath.Join(dir, "dirlink"))
				return filepath.Join(dir, "dirlink", "f")
			},
			check: func(t *testing.T, dir, path string) {
				assertLink(t, filepath.Join(dir, "dirlink"), "real")
				if got := mustRead(t, filepath.Join(dir, "real", "f")); got != "new content" {
					t.Errorf("target = %q", got)
				}
			},
		},
		{
			name: "writes a dangling symlink's target",
			setup: func(t *testing.T, dir string) string {
				mustSymlink(t, "later.txt", filepath.Join(dir, "link.txt"))
				return filepath.Join(dir, "link.txt")
			},
			check: func(t *testing.T, dir, path string) {
				assertLink(t, path, "later.txt")
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
			if err := WriteFile(path, []byte("new content"), 0o640); err != nil {
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

// TestWriteFileKeepsOwner: a file owned by someone else (root can write it)
// keeps its owner and group, through a link too.
func TestWriteFileKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "theirs.toml")
	mustWrite(t, target, "old")
	if err := os.Chown(target, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o620); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.toml")
	mustSymlink(t, "theirs.toml", link)
	if err := WriteFile(link, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 65534 || st.Gid != 65534 || fi.Mode().Perm() != 0o620 {
		t.Errorf("owner %d:%d mode %v, want 65534:65534 -rw--w----", st.Uid, st.Gid, fi.Mode().Perm())
	}
	assertLink(t, link, "theirs.toml")
}

func TestWriteFileFailuresLeaveOldFile(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string) string
		wantErr error
		root    bool // also fails for root (root bypasses permission bits)
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
			root:    true,
		},
		{
			name: "read-only file behind a link",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "ro.txt")
				mustWrite(t, p, "old")
				if err := os.Chmod(p, 0o444); err != nil {
					t.Fatal(err)
				}
				mustSymlink(t, "ro.txt", filepath.Join(dir, "link"))
				return filepath.Join(dir, "link")
			},
			wantErr: syscall.EACCES,
			root:    true,
		},
		{
			name: "read-only folder",
			setup: func(t *testing.T, dir string) string {
				sub := filepath.Join(dir, "sub")
				p := filepath.Join(sub, "pi.toml")
				mustWrite(t, p, "old")
				if err := os.Chmod(sub, 0o555); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.Chmod(sub, 0o755) })
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
			root: true,
		},
		{
			name: "named pipe",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "fifo")
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			},
			root: true,
		},
		{
			name: "parent is a file",
			setup: func(t *testing.T, dir string) string {
				mustWrite(t, filepath.Join(dir, "file"), "old")
				return filepath.Join(dir, "file", "child.txt")
			},
			wantErr: syscall.ENOTDIR,
			root:    true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if os.Geteuid() == 0 && !tt.root {
				t.Skip("root bypasses folder permissions")
			}
			dir := t.TempDir()
			path := tt.setup(t, dir)
			before := dirSnapshot(t, dir)
			err := WriteFile(path, []byte("new"), 0o644)
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

// TestWriteFileReadOnlyFolderAsNobody is the read-only folder case for a
// root test run: root bypasses mode bits, so a subprocess running as uid
// 65534 writes a file it may write in a folder it may not add to. The
// temporary file cannot be created; the old file must stay and nothing else
// may appear.
func TestWriteFileReadOnlyFolderAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the writer as another user (the in-process case covers non-root)")
	}
	// A folder every user can enter, holding a copy of the test binary.
	base, err := os.MkdirTemp("", "atomicfile-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "writer.test")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "proj") // root's, 0755: nobody cannot add to it
	path := filepath.Join(dir, "pi.toml")
	mustWrite(t, path, "old")
	if err := os.Chown(path, 65534, 65534); err != nil { // nobody may write the file itself
		t.Fatal(err)
	}
	before := dirSnapshot(t, dir)
	cmd := exec.Command(bin, "-test.run=^TestWriteOnceProcess$")
	cmd.Env = append(os.Environ(), "PI_TEST_ATOMICFILE_ONCE="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("writer subprocess: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "write file "+path+": ") || !strings.Contains(string(out), "permission denied") {
		t.Errorf("writer said %q, want a permission error naming %s", out, path)
	}
	if after := dirSnapshot(t, dir); !mapsEqual(before, after) {
		t.Errorf("disk changed:\nbefore %v\nafter  %v", before, after)
	}
}

// TestWriteOnceProcess writes PI_TEST_ATOMICFILE_ONCE once and prints the
// error (for TestWriteFileReadOnlyFolderAsNobody); otherwise it does nothing.
func TestWriteOnceProcess(t *testing.T) {
	path := os.Getenv("PI_TEST_ATOMICFILE_ONCE")
	if path == "" {
		t.Skip("only runs as a subprocess of TestWriteFileReadOnlyFolderAsNobody")
	}
	err := WriteFile(path, []byte("new"), 0o644)
	fmt.Printf("error: %v\n", err)
}

func TestTarget(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "real", "f"), "")
	mustSymlink(t, "real", filepath.Join(dir, "dirlink"))
	mustSymlink(t, "real/new", filepath.Join(dir, "dangling"))
	mustSymlink(t, "dangling", filepath.Join(dir, "chain"))
	mustSymlink(t, "loop2", filepath.Join(dir, "loop1"))
	mustSymlink(t, "loop1", filepath.Join(dir, "loop2"))
	tests := []struct{ in, want string }{
		{filepath.Join(dir, "real", "f"), filepath.Join(dir, "real", "f")},
		{filepath.Join(dir, "dirlink", "f"), filepath.Join(dir, "real", "f")},
		{filepath.Join(dir, "dirlink", "missing"), filepath.Join(dir, "real", "missing")},
		{filepath.Join(dir, "dangling"), filepath.Join(dir, "real", "new")},
		{filepath.Join(dir, "chain"), filepath.Join(dir, "real", "new")},
		{filepath.Join(dir, "no", "such", "dir", "f"), filepath.Join(dir, "no", "such", "dir", "f")},
		{filepath.Join(dir, "real", "..", "real", "f"), filepath.Join(dir, "real", "f")},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.in), func(t *testing.T) {
			if got := Target(tt.in); got != tt.want {
				t.Errorf("Target(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	// A loop ends (after 40 hops) instead of spinning.
	if got := Target(filepath.Join(dir, "loop1")); !strings.HasPrefix(got, dir) {
		t.Errorf("Target(loop) = %q", got)
	}
}

// TestWriteFileKilled SIGKILLs a process that keeps rewriting one file at
// random moments: the file must always be a whole old or new version, and
// the only thing a kill can leave besides it is a temporary file.
func TestWriteFileKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns writer processes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	versions := testVersions()
	mustWrite(t, path, versions[0])
	for i := range 20 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$")
		cmd.Env = append(os.Environ(), "PI_TEST_ATOMICFILE_WRITER="+path)
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

// TestWriterProcess is the writer of TestWriteFileKilled when run as its
// subprocess; otherwise it does nothing.
func TestWriterProcess(t *testing.T) {
	path := os.Getenv("PI_TEST_ATOMICFILE_WRITER")
	if path == "" {
		t.Skip("only runs as the subprocess of TestWriteFileKilled")
	}
	versions := testVersions()
	for i := 0; ; i++ {
		if err := WriteFile(path, []byte(versions[i%2]), 0o644); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			childready.Signal()
		}
	}
}

func testVersions() [2]string {
	return [2]string{strings.Repeat("old line\n", 100_000), strings.Repeat("NEW LINE, longer\n", 70_000)}
}

func mustWrite(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustSymlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func assertLink(t testing.TB, link, want string) {
	t.Helper()
	got, err := os.Readlink(link)
	if err != nil {
		t.Errorf("%s is no longer a symlink: %v", link, err)
		return
	}
	if got != want {
		t.Errorf("%s -> %s, want -> %s", link, got, want)
	}
}

func assertMode(t testing.TB, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Errorf("mode %v, want %v", fi.Mode().Perm(), want)
	}
}

func assertNoTemp(t testing.TB, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.Contains(fi.Name(), tempMarker) {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// dirSnapshot maps every entry under dir to its mode (folders), link target
// (symlinks) or content (files).
func dirSnapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case fi.IsDir():
			out[rel+"/"] = fi.Mode().String()
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fi.Mode().String() + " " + string(b)
		default:
			out[rel] = fi.Mode().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
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

// TestWriteStrings: the file is the concatenation of the pieces (empty ones
// included), through a symlink and keeping the mode, as WriteFile.
func TestWriteStrings(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.txt")
	mustWrite(t, real, "old content\n")
	if err := os.Chmod(real, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink("real.txt", link); err != nil {
		t.Fatal(err)
	}
	pieces := []string{"", "head\r", "\n", "", "middle", "tail\n", ""}
	if err := WriteStrings(link, pieces, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(pieces, ""); string(got) != want {
		t.Fatalf("file %q, want %q", got, want)
	}
	assertMode(t, real, 0o600)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
}

// MoveDir moves a folder, and never replaces what is at the destination,
// not even an empty folder (which rename(2) would replace).
func TestMoveDir(t *testing.T) {
	dir := t.TempDir()
	old, empty, full := filepath.Join(dir, "old"), filepath.Join(dir, "empty"), filepath.Join(dir, "full")
	for _, d := range []string{old, empty, full} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(old, "k"), "v")
	mustWrite(t, filepath.Join(full, "k"), "theirs")
	for _, to := range []string{empty, full} {
		if err := MoveDir(old, to); !errors.Is(err, fs.ErrExist) {
			t.Errorf("MoveDir onto %s = %v, want an error for what exists", filepath.Base(to), err)
		}
	}
	if got := mustRead(t, filepath.Join(full, "k")); got != "theirs" {
		t.Errorf("the destination changed: %q", got)
	}
	to := filepath.Join(dir, "new")
	if err := MoveDir(old, to); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(to, "k")); got != "v" {
		t.Errorf("moved folder holds %q", got)
	}
	if _, err := os.Lstat(old); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old folder is still there: %v", err)
	}
}
