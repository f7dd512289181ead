//go:build linux || darwin || freebsd || openbsd || netbsd

package rootfs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		real, target string
		rel          []string
		ok           bool
	}{
		{"/p/src", "/p/src", nil, true},
		{"/p/src", "/p/src/a/b", []string{"a", "b"}, true},
		{"/p/src", "//p//src/./a/", []string{"a"}, true},
		{"/p/src", "/p/src/../etc", []string{"..", "etc"}, true}, // the walk refuses the ".."
		{"/p/src", "/p/srcx/a", nil, false},
		{"/p/src", "/p", nil, false},
		{"/p/src", "/etc", nil, false},
		{"/p/src", "p/src/a", nil, false},
		{"/", "/etc", []string{"etc"}, true},
	} {
		rel, ok := within(c.real, c.target)
		if ok != c.ok || !slices.Equal(rel, c.rel) {
			t.Errorf("within(%q, %q) = %q, %v; want %q, %v", c.real, c.target, rel, ok, c.rel, c.ok)
		}
	}
}

func TestLinkTargetStaysIn(t *testing.T) {
	for _, c := range []struct {
		folder []string
		target string
		ok     bool
	}{
		{nil, "a", true},
		{nil, "./a/b", true},
		{nil, "..", false},
		{nil, "../p/src/a", false}, // climbs above the mount even if it comes back
		{[]string{"a"}, "..", true},
		{[]string{"a"}, "../b", true},
		{[]string{"a"}, "../..", false},
		{[]string{"a", "b"}, "c/../../../x", true},
		{[]string{"a", "b"}, "c/../../../../x", false},
		{[]string{"a", "b"}, "c/../../x", true},
		{nil, "/p/src", true},
		{nil, "/p/src/a", true},
		{[]string{"a"}, "/p/src/a/..", true},
		{nil, "/p/src/..", false},
		{nil, "/p/srcx", false},
		{nil, "/etc/passwd", false},
		{nil, "/", false},
	} {
		if got := linkTargetStaysIn("/p/src", c.folder, c.target); got != c.ok {
			t.Errorf("linkTargetStaysIn(%q, %q) = %v, want %v", c.folder, c.target, got, c.ok)
		}
	}
}

// mountFixture is a folder to mount with an escaping link, a secret beside
// it, and the refusals a FS reported.
type mountFixture struct {
	dir, secret string
	denied      []string
}

func newMountFixture(t *testing.T) *mountFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &mountFixture{dir: filepath.Join(base, "m"), secret: filepath.Join(base, "secret.txt")}
	for _, step := range []error{
		os.MkdirAll(filepath.Join(f.dir, "sub"), 0o755),
		os.WriteFile(f.secret, []byte("top secret"), 0o600),
		os.WriteFile(filepath.Join(f.dir, "sub", "f.txt"), []byte("inside"), 0o644),
		os.Symlink("../secret.txt", filepath.Join(f.dir, "esc")),
		os.Symlink(f.secret, filepath.Join(f.dir, "escabs")),
		os.Symlink(filepath.Join(f.dir, "sub", "f.txt"), filepath.Join(f.dir, "absin")),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	return f
}

func (f *mountFixture) fs(t *testing.T, readOnly bool) *FS {
	t.Helper()
	root, err := Open(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	return &FS{root: root, readOnly: readOnly, deny: func(guest, why string) { f.denied = append(f.denied, guest+" "+why) }}
}

// TestMountFSChmod covers Chmod, which WASI preview 1 guests cannot reach
// (there is no chmod call): through an escaping link it is refused and the
// target keeps its mode; in the mount it works; a read-only mount refuses.
func TestMountFSChmod(t *testing.T) {
	for _, walk := range []bool{false, true} {
		ForceWalk.Store(walk)
		f := newMountFixture(t)
		m := f.fs(t, false)
		for _, p := range []string{"esc", "escabs"} {
			if errno := m.Chmod(p, 0o777); errno != experimentalsys.EACCES {
				t.Errorf("walk=%v: chmod %s = %v, want EACCES", walk, p, errno)
			}
		}
		if fi, _ := os.Stat(f.secret); fi.Mode().Perm() != 0o600 {
			t.Errorf("walk=%v: the secret's mode changed to %v", walk, fi.Mode())
		}
		if errno := m.Chmod("absin", 0o600); errno != 0 {
			t.Errorf("walk=%v: chmod absin = %v", walk, errno)
		}
		if fi, _ := os.Stat(filepath.Join(f.dir, "sub", "f.txt")); fi.Mode().Perm() != 0o600 {
			t.Errorf("walk=%v: chmod through an in-mount link did not reach the file: %v", walk, fi.Mode())
		}
		if errno := f.fs(t, true).Chmod("sub/f.txt", 0o777); errno != experimentalsys.EROFS {
			t.Errorf("walk=%v: chmod on ro = %v, want EROFS", walk, errno)
		}
		if len(f.denied) != 2 {
			t.Errorf("walk=%v: refusals logged: %q", walk, f.denied)
		}
	}
	ForceWalk.Store(false)
}

// TestMountFSStatMatchesDirFS: what a guest learns from Stat, Lstat,
// Readdir and the fd-level Stat is what wazero's own DirFS tells it.
func TestMountFSStatMatchesDirFS(t *testing.T) {
	f := newMountFixture(t)
	m := f.fs(t, false)
	ref := sysfs.DirFS(f.dir)
	for _, p := range []string{".", "sub", "sub/f.txt", "absin"} {
		a, e1 := m.Stat(p)
		b, e2 := ref.Stat(p)
		if e1 != 0 || e2 != 0 || a != b {
			t.Errorf("Stat(%s) = %+v %v, DirFS %+v %v", p, a, e1, b, e2)
		}
		a, e1 = m.Lstat(p)
		b, e2 = ref.Lstat(p)
		if e1 != 0 || e2 != 0 || a != b {
			t.Errorf("Lstat(%s) = %+v %v, DirFS %+v %v", p, a, e1, b, e2)
		}
		fa, e1 := m.OpenFile(p, experimentalsys.O_RDONLY, 0)
		fb, e2 := ref.OpenFile(p, experimentalsys.O_RDONLY, 0)
		if e1 != 0 || e2 != 0 {
			t.Fatalf("open %s: %v %v", p, e1, e2)
		}
		sa, _ := fa.Stat()
		sb, _ := fb.Stat()
		ia, _ := fa.Ino()
		ib, _ := fb.Ino()
		if sa != sb || ia != ib {
			t.Errorf("File.Stat(%s) = %+v, DirFS %+v", p, sa, sb)
		}
		if isDir, _ := fa.IsDir(); isDir {
			da, e1 := fa.Readdir(-1)
			db, e2 := fb.Readdir(-1)
			sortDirents(da)
			sortDirents(db)
			if e1 != 0 || e2 != 0 || !slices.Equal(da, db) {
				t.Errorf("Readdir(%s) = %v %v, DirFS %v %v", p, da, e1, db, e2)
			}
			// A rewind lists everything again.
			if _, errno := fa.Seek(0, 0); errno != 0 {
				t.Errorf("rewind %s: %v", p, errno)
			}
			again, _ := fa.Readdir(-1)
			if len(again) != len(da) {
				t.Errorf("after a rewind Readdir(%s) = %v", p, again)
			}
		}
		fa.Close()
		fb.Close()
	}
}

func sortDirents(d []experimentalsys.Dirent) {
	slices.SortFunc(d, func(a, b experimentalsys.Dirent) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
}

// TestMountFSUtimensOmit: UTIME_OMIT keeps a time, by path and by fd.
func TestMountFSUtimensOmit(t *testing.T) {
	f := newMountFixture(t)
	m := f.fs(t, false)
	p := filepath.Join(f.dir, "sub", "f.txt")
	before, _ := os.Stat(p)
	want := time.Unix(1_000_000_000, 0)
	if errno := m.Utimens("absin", experimentalsys.UTIME_OMIT, want.UnixNano()); errno != 0 {
		t.Fatal(errno)
	}
	after, _ := os.Stat(p)
	if !after.ModTime().Equal(want) {
		t.Errorf("mtime = %v, want %v", after.ModTime(), want)
	}
	file, errno := m.OpenFile("sub/f.txt", experimentalsys.O_RDWR, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer file.Close()
	if errno := file.Utimens(experimentalsys.UTIME_OMIT, before.ModTime().UnixNano()); errno != 0 && errno != experimentalsys.ENOSYS {
		t.Fatal(errno)
	} else if errno == 0 {
		if again, _ := os.Stat(p); !again.ModTime().Equal(before.ModTime()) {
			t.Errorf("mtime = %v, want %v", again.ModTime(), before.ModTime())
		}
	}
}

// BenchmarkFSOpenRead: open, read and close a small file two folders deep,
// through wazero's DirFS (what mounts used before) and through FS with
// openat2 and with the component walk.
func BenchmarkFSOpenRead(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "f.txt"), make([]byte, 4096), 0o644); err != nil {
		b.Fatal(err)
	}
	root, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	ours := &FS{root: root, deny: func(string, string) {}}
	buf := make([]byte, 8192)
	for _, c := range []struct {
		name string
		fs   experimentalsys.FS
		walk bool
	}{{"dirfs", sysfs.DirFS(dir), false}, {"mountfs-openat2", ours, false}, {"mountfs-walk", ours, true}} {
		b.Run(c.name, func(b *testing.B) {
			ForceWalk.Store(c.walk)
			defer ForceWalk.Store(false)
			for b.Loop() {
				f, errno := c.fs.OpenFile("a/b/f.txt", experimentalsys.O_RDONLY, 0)
				if errno != 0 {
					b.Fatal(errno)
				}
				if n, errno := f.Read(buf); errno != 0 || n != 4096 {
					b.Fatal(n, errno)
				}
				f.Close()
			}
		})
	}
}
